"""Benchmark of the testbed audit: wall time of the 40-task audit and the 900-task estimate.

Run from the repository root::

    python -m benchmarks.bench_audit [--workers 2] [--tasks children] [--budget N]

It runs ``python -m llm_aai.audit`` on the 40 children tasks (one seed, and the second pass
that replays unsolved Unity-passed tasks in the 2019 build) into a temporary directory and
reports the wall time (goal < 10 min on 2 cores), the CPU seconds per episode (what a shared
machine cannot inflate) and the estimate for all 900 tasks on the same workers, from the CPU
seconds per episode of the sample and its share of second-pass episodes (goal < 90 min on 2
cores). The
whole testbed takes ``python -m llm_aai.audit --out DIR --workers 2`` (its report prints the
measured times).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import tempfile
import time
from pathlib import Path

from benchmarks.goal_table import print_goal_table
from llm_aai.audit.run import read_rows
from llm_aai.cli.audit import main as audit
from llm_aai.oracle import DEFAULT_BUDGET
from llm_aai.sim.simulator import PHYSICS_BUILDS


def main(argv: list[str] | None = None) -> int:
    """Print the benchmark table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--tasks", default="children", help="tasks to audit (default the 40)")
    parser.add_argument("--budget", type=int, default=DEFAULT_BUDGET)
    parser.add_argument("--arenas-dir", default=None)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "audit"
        flags = ["--out", str(out), "--tasks", args.tasks, "--workers", str(args.workers),
                 "--oracle-budget", str(args.budget), "--no-progress"]
        if args.arenas_dir:
            flags += ["--arenas-dir", args.arenas_dir]
        started = time.monotonic()
        with contextlib.redirect_stdout(io.StringIO()):  # the audit prints its whole report
            status = audit(flags)
        wall = time.monotonic() - started
        if status != 0:
            return status
        rows = read_rows(out)
    own = [r for r in rows if r.physics_build == PHYSICS_BUILDS[0]]
    cpu = [r.search_seconds for r in rows if r.search_seconds is not None]
    per_episode = sum(cpu) / len(cpu)
    solved = sum(r.solved for r in own)
    # the whole testbed: its episodes, and the second pass in proportion to this sample's
    estimate = 900 * (len(rows) / len(own)) * per_episode / args.workers / 60
    table = [
        ("episodes (3.x / second pass in 2019)", f"{len(own)} / {len(rows) - len(own)}", ""),
        ("solved in 3.x", f"{solved}", ""),
        (f"wall time, {args.workers} workers (min)", f"{wall / 60:.1f}",
         "goal < 10 for the 40 tasks"),
        ("CPU seconds per episode", f"{per_episode:.2f}", ""),
        (f"900-task estimate, {args.workers} workers (min)", f"{estimate:.0f}", "goal < 90"),
    ]
    print_goal_table(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
