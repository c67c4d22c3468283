"""``python -m llm_aai.variants make``: validated procedural variants of testbed tasks.

Examples::

    python -m llm_aai.variants make 01-04-03 04-05-02 --count 3 --seed 7 --out variants/
    python -m llm_aai.variants make children --count 3 --out variants/ --workers 2
    python -m llm_aai.run --model heuristic --variants variants/

Each kept variant is ``DIR/<task>-v<k>.yaml``; ``DIR/variants.csv`` lists every candidate,
kept or rejected with its reason, and the command ends with the rejection counts. Stopped
(Ctrl-C, SIGTERM) it keeps the finished tasks; the same command again resumes and makes only
the rest (exit 130 when interrupted).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

from llm_aai.arena import ArenaError
from llm_aai.arena.catalog import (
    ArenaNotFoundError,
    TaskSelectionError,
    all_tasks,
    children_subset,
    select_tasks,
    unity_passed_tasks,
)
from llm_aai.execution import CHOICES, RayUnavailable, interrupt_on_sigterm
from llm_aai.logs.store import atomic_write_text
from llm_aai.oracle import DEFAULT_BUDGET
from llm_aai.sim.builds import PHYSICS_BUILDS
from llm_aai.variants import (
    MakeSettings,
    TaskOutcome,
    ValidationSettings,
    VariantIndexError,
    VariantRequestError,
    make_variants,
)
from llm_aai.variants.coverage import coverage_markdown


def build_parser() -> argparse.ArgumentParser:
    """The command's arguments."""
    parser = argparse.ArgumentParser(
        prog="python -m llm_aai.variants",
        description="Make procedural variants of testbed tasks, each validated in the "
                    "simulator.")
    commands = parser.add_subparsers(dest="command", required=True)
    make = commands.add_parser("make", help="make K validated variants of each task")
    make.add_argument("tasks", nargs="+", metavar="TASK",
                      help="task ids (01-04-03), 'children' (the 40), 'unity-passed' (the "
                           "736 an Olympics entrant passed in Unity) or 'all' (the 900)")
    make.add_argument("--count", type=int, required=True, help="variants to keep per task")
    make.add_argument("--seed", type=int, default=0, help="generation seed (default 0)")
    make.add_argument("--out", type=Path, required=True, help="folder for the variants")
    make.add_argument("--level", help="keep only tasks of these levels, e.g. 1-3,7")
    make.add_argument("--arenas-dir", type=Path, default=None,
                      help="folder of LL-TT-VV.yaml testbed files (as run has it)")
    make.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    make.add_argument("--executor", choices=CHOICES, default="local",
                      help="where tasks run: local worker processes (default) or Ray tasks "
                           "(docs/ray.md; the workers write into --out, so a multi-machine "
                           "cluster needs --out on a shared filesystem)")
    make.add_argument("--ray-address", default=None,
                      help="the Ray cluster to join (--executor ray; default: start Ray here)")
    make.add_argument("--seeds", type=int, default=1,
                      help="placements and oracle episodes per arena (default 1)")
    make.add_argument("--heuristic-seeds", type=int, default=ValidationSettings.heuristic_seeds,
                      help="heuristic-agent episodes per arena for the parity check (default "
                           f"{ValidationSettings.heuristic_seeds}; pass counts may differ by "
                           f"{ValidationSettings.heuristic_tolerance})")
    make.add_argument("--oracle-budget", type=int, default=DEFAULT_BUDGET,
                      help=f"oracle search budget per episode ({DEFAULT_BUDGET} steps)")
    make.add_argument("--candidates", type=int, default=None,
                      help="candidates tried per task (default 4 x count + 8)")
    make.add_argument("--physics-builds", default=",".join(PHYSICS_BUILDS),
                      help="Animal-AI builds a parent is measured in, in order; its variants "
                           "are checked in the first whose oracle solves it (default "
                           f"{','.join(PHYSICS_BUILDS)}; {PHYSICS_BUILDS[0]} alone leaves "
                           "build-dependent tasks without variants)")
    coverage = commands.add_parser(
        "coverage", help="report how many Unity-passed tasks of a folder got their K variants")
    coverage.add_argument("folder", type=Path, help="a folder 'make' wrote (it may be partial)")
    coverage.add_argument("--out", type=Path, default=None,
                          help="write the Markdown report here (default: print it)")
    return parser


def _coverage(args: argparse.Namespace) -> int:
    """``coverage DIR``: the report, printed or written to ``--out``."""
    command = f"python -m llm_aai.variants coverage {args.folder}" + (
        f" --out {args.out}" if args.out else "")
    try:
        text = coverage_markdown(args.folder, command)
    except (VariantIndexError, OSError, ValueError, KeyError) as error:
        print(f"variants: {args.folder}: cannot report its coverage: {error}", file=sys.stderr)
        return 2
    if args.out is None:
        print(text, end="")
    else:
        atomic_write_text(args.out, text)  # an interrupted write leaves the earlier report
        print(f"wrote {args.out}")
    return 0


def _tasks(tokens: list[str], level: str | None):
    ids: list[str] = []
    chosen = []
    for token in tokens:
        for part in filter(None, token.split(",")):
            if part == "children":
                chosen += children_subset()
            elif part == "all":
                chosen += all_tasks()
            elif part == "unity-passed":
                chosen += unity_passed_tasks()
            else:
                ids.append(part)
    if ids:
        chosen += select_tasks(tasks=",".join(ids), full=True)
    if level:
        allowed = {t.task_id for t in select_tasks(level=level, full=True)}
        chosen = [t for t in chosen if t.task_id in allowed]
        if not chosen:
            raise TaskSelectionError(f"no task given is in level(s) {level}")
    return sorted(set(chosen))


def _line(outcome: TaskOutcome, count: int) -> str:
    rejected = outcome.rejections
    text = f"{outcome.task_id}: {len(outcome.kept)}/{count} kept"
    parent = [row for row in outcome.rows if row.get("seed", "") == ""]
    if parent:  # the task itself was refused: say why
        return f"{text}; {parent[0]['reason']}: {parent[0].get('detail', '')}"
    if rejected:
        text += "; rejected " + ", ".join(f"{n} {reason}" for reason, n in rejected.items())
    return text


def main(argv: list[str] | None = None) -> int:
    """Make variants; exit 2 on bad input, 0 otherwise (a task short of K is reported)."""
    args = build_parser().parse_args(argv)
    if args.command == "coverage":
        return _coverage(args)
    if args.workers < 1 or args.seeds < 1 or args.oracle_budget < 0:
        print("variants: --workers and --seeds must be >= 1 and --oracle-budget >= 0",
              file=sys.stderr)
        return 2
    if args.ray_address is not None and args.executor != "ray":
        print("variants: --ray-address needs --executor ray", file=sys.stderr)
        return 2
    if args.heuristic_seeds <= ValidationSettings.heuristic_tolerance:
        print(f"variants: --heuristic-seeds must be above the tolerance "
              f"{ValidationSettings.heuristic_tolerance}", file=sys.stderr)
        return 2
    builds = tuple(b.strip() for b in args.physics_builds.split(",") if b.strip())
    try:
        checks = ValidationSettings(seeds=args.seeds, budget=args.oracle_budget,
                                    heuristic_seeds=args.heuristic_seeds, physics_builds=builds)
    except ValueError as error:
        print(f"variants: --physics-builds: {error}", file=sys.stderr)
        return 2
    started = time.monotonic()
    finished: list[TaskOutcome] = []

    def progress(outcome: TaskOutcome) -> None:
        finished.append(outcome)
        print(_line(outcome, args.count), flush=True)

    try:
        with interrupt_on_sigterm():
            tasks = _tasks(args.tasks, args.level)
            settings = MakeSettings(count=args.count, seed=args.seed,
                                    candidates=args.candidates, validation=checks)
            outcomes = make_variants(tasks, args.out, settings, arenas_dir=args.arenas_dir,
                                     workers=args.workers, on_task=progress,
                                     executor=args.executor, address=args.ray_address)
    except (TaskSelectionError, ArenaNotFoundError, VariantRequestError, VariantIndexError,
            ArenaError, RayUnavailable) as error:
        print(f"variants: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"variants: interrupted; {len(finished)} more task(s) finished and kept in "
              f"{args.out}. Run the same command again to make the rest.", file=sys.stderr)
        return 130
    _summary(outcomes, args.count, args.out, time.monotonic() - started)
    return 0


def _summary(outcomes: list[TaskOutcome], count: int, out: Path, seconds: float) -> None:
    rejected: Counter = Counter()
    not_applied: Counter = Counter()
    for outcome in outcomes:
        rejected += outcome.rejections
        not_applied += outcome.not_applied
    full = sum(len(o.kept) >= count for o in outcomes)
    kept = sum(len(o.kept) for o in outcomes)
    resumed = sum(o.resumed for o in outcomes)
    if resumed:
        print(f"\nresumed: {resumed} of {len(outcomes)} tasks were finished by an earlier run "
              "into this folder")
    print(f"\n{kept} variants kept in {out}; {full} of {len(outcomes)} tasks have all {count} "
          f"({seconds / 60:.1f} min)")
    print("rejected, by reason: " + (", ".join(f"{reason} {n}" for reason, n
                                              in rejected.most_common()) or "none"))
    if not_applied:
        print("transformations that did not apply (left out of the candidate): " + ", ".join(
            f"{reason} {n}" for reason, n in not_applied.most_common()))
    short = [o.task_id for o in outcomes if len(o.kept) < count]
    if short:
        print(f"short of {count}: {', '.join(sorted(short))}")
