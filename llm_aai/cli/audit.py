"""``python -m llm_aai.audit``: play the oracle over the testbed and report against Unity.

Examples::

    python -m llm_aai.audit --out audits/children --tasks children --workers 2
    python -m llm_aai.audit --out audits/all --workers 2            # all 900 tasks
    python -m llm_aai.audit --out audits/all --report-only          # rewrite audit.md
    python -m llm_aai.audit --out audits/2019 --physics-build 2019  # the Olympics build

Every Unity-passed task left unsolved is then played in the other build too (unless
``--no-other-build``), so the report says which are build-dependent.

Run it again with the same ``--out`` to resume an interrupted audit: recorded episodes are
kept and skipped.
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
import time
from pathlib import Path

from llm_aai.arena.catalog import (
    ArenaNotFoundError,
    TaskSelectionError,
    children_subset,
    select_tasks,
)
from llm_aai.audit import AuditSettings, AuditSettingsMismatch, run_audit, write_report
from llm_aai.audit.rows import AuditRowError
from llm_aai.audit.run import read_rows, recorded_audit
from llm_aai.execution import CHOICES, RayUnavailable, interrupt_on_sigterm
from llm_aai.oracle import DEFAULT_BUDGET
from llm_aai.sim.simulator import PHYSICS_BUILDS


def build_parser() -> argparse.ArgumentParser:
    """The command's arguments."""
    parser = argparse.ArgumentParser(
        prog="python -m llm_aai.audit",
        description="Run the privileged oracle over testbed tasks and compare with what "
                    "Olympics entrants passed in Unity (audit.csv and audit.md in --out).")
    parser.add_argument("--out", type=Path, required=True, help="audit directory (resumable)")
    parser.add_argument("--level", help="levels, e.g. 1-3,7 (default: all)")
    parser.add_argument("--tasks", help="task ids (01-04-03,...) or 'children' for the 40")
    parser.add_argument("--seeds", type=int, default=1, help="episodes per task (default 1)")
    parser.add_argument("--arenas-dir", type=Path, default=None,
                        help="folder of LL-TT-VV.yaml testbed files (as run has it)")
    parser.add_argument("--workers", type=int, default=1,
                        help="episodes at once (worker processes; the CPUs of a Ray started "
                             "here)")
    parser.add_argument("--executor", choices=CHOICES, default="local",
                        help="where episodes run: local worker processes (default) or Ray "
                             "tasks (docs/ray.md)")
    parser.add_argument("--ray-address", default=None,
                        help="the Ray cluster to join (--executor ray; default: start Ray here)")
    parser.add_argument("--oracle-budget", type=int, default=DEFAULT_BUDGET,
                        help=f"search budget per episode in simulated steps ({DEFAULT_BUDGET})")
    parser.add_argument("--frames", action="store_true",
                        help="the oracle-frames ceiling: per-action control, no script cap")
    parser.add_argument("--physics-build", choices=PHYSICS_BUILDS, default=PHYSICS_BUILDS[0],
                        help="the Animal-AI build whose physics to play: 3.x (default, the "
                             "build the LLM-AAI paper used) or 2019 (the Olympics build: "
                             "bouncy bounce balls, flat zones, no health)")
    parser.add_argument("--no-other-build", dest="other_build", action="store_false",
                        help="skip the second pass that plays every Unity-passed task left "
                             "unsolved in the other build (what tells build-dependent tasks)")
    parser.add_argument("--report-only", action="store_true",
                        help="only rewrite audit.md from audit.csv")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the audit (or rewrite its report); exit 2 on bad input, 130 on Ctrl-C, 0 otherwise.

    Ctrl-C (or SIGTERM, read as Ctrl-C) is answered the same way wherever it lands, even after
    the last episode while the report is written: the workers end, finished rows are in
    ``audit.csv`` and the same command resumes.
    """
    args = build_parser().parse_args(argv)
    if args.seeds < 1 or args.workers < 1 or args.oracle_budget < 0:
        print("audit: --seeds and --workers must be >= 1 and --oracle-budget >= 0",
              file=sys.stderr)
        return 2
    if args.ray_address is not None and args.executor != "ray":
        print("audit: --ray-address needs --executor ray", file=sys.stderr)
        return 2
    settings = AuditSettings(budget=args.oracle_budget, per_frame=args.frames,
                             physics_build=args.physics_build)
    command = "python -m llm_aai.audit " + shlex.join(
        sys.argv[1:] if argv is None else list(argv))
    try:
        with interrupt_on_sigterm():
            return _audit(args, settings, command)
    except KeyboardInterrupt:
        print(f"\naudit: interrupted; finished episodes are in {args.out / 'audit.csv'}; "
              "run the same command again to resume", file=sys.stderr)
        return 130


def _audit(args: argparse.Namespace, settings: AuditSettings, command: str) -> int:
    started = time.monotonic()
    if not args.report_only:
        try:
            if args.tasks == "children":
                tasks = list(children_subset())
            else:
                tasks = list(select_tasks(level=args.level, tasks=args.tasks, full=True))
            bar = _progress_bar(not args.no_progress)
            rows = run_audit(tasks, args.seeds, args.out, settings, arenas_dir=args.arenas_dir,
                             workers=args.workers, progress=bar, command=command,
                             revision=_revision(), other_build=args.other_build,
                             executor=args.executor, address=args.ray_address)
            if bar is not None:
                bar.close()
            _, first, revision = recorded_audit(args.out)
            command = first or command  # the audit's first command
        except (TaskSelectionError, ArenaNotFoundError, AuditSettingsMismatch,
                AuditRowError, RayUnavailable) as error:
            print(f"audit: {error}", file=sys.stderr)
            return 2
    else:
        try:
            rows = read_rows(args.out)
        except AuditRowError as error:
            print(f"audit: {error}", file=sys.stderr)
            return 2
        if not rows:
            print(f"audit: no audit.csv in {args.out}", file=sys.stderr)
            return 2
        recorded = recorded_audit(args.out)
        revision = ""
        if recorded is not None:
            settings, command, revision = recorded[0], recorded[1] or command, recorded[2]
    path = write_report(args.out, rows, command=command, settings=vars(settings),
                        revision=revision or f"{_revision()} (when the report was written)",
                        wall_seconds=None if args.report_only else time.monotonic() - started)
    print(path.read_text(encoding="utf-8"))
    return 0


def _progress_bar(enabled: bool):
    if not enabled:
        return None
    from tqdm import tqdm

    bar = tqdm(unit="episode", file=sys.stderr, dynamic_ncols=True)

    def update(done: int, total: int) -> None:
        bar.total = total
        bar.n = done
        bar.refresh()

    update.close = bar.close  # type: ignore[attr-defined]
    return update


def _revision() -> str:
    """``branch@commit`` of the checkout, when there is one."""
    here = Path(__file__).resolve().parent
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=here,
                                capture_output=True, text=True, check=True).stdout.strip()
        branch = subprocess.run(["git", "rev-parse", "--abbrev-ref", "HEAD"], cwd=here,
                                capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""
    return f"branch {branch}, commit {commit}"


if __name__ == "__main__":
    sys.exit(main())
