"""Benchmark of procedural variants: time to make 3 of each children task, and the coverage.

Run from the repository root::

    python -m benchmarks.bench_variants [--workers 2] [--arenas-dir DIR]
    python -m benchmarks.bench_variants --unity-passed --level 3     # coverage on one level
    python -m benchmarks.bench_variants --unity-passed --sample 60   # or on a random sample

The first form runs ``python -m llm_aai.variants make children --count 3`` into a temporary
folder and reports the wall time (goal: under 20 minutes on 2 cores), the CPU time, how many
tasks got all 3 and the rejections by reason. ``--unity-passed`` makes 3 variants of the
tasks Olympics entrants passed in Unity (all 736, one level, or a seeded sample) and reports
the share with at least 3 validated variants (goal: at least 95 %), over all of them and over
those whose layout can be transformed (a file whose every object is placed at random is new
every episode already and has no variant).
"""

from __future__ import annotations

import argparse
import csv
import random
import resource
import tempfile
import time
from collections import Counter
from pathlib import Path

from benchmarks.goal_table import print_goal_table
from llm_aai.arena.catalog import select_tasks, unity_passed_tasks
from llm_aai.cli.variants import main as make
from llm_aai.variants.generate import UNTRANSFORMABLE
from llm_aai.variants.index import INDEX_FILE


def _tasks(args: argparse.Namespace) -> list[str]:
    if not args.unity_passed:
        return ["children"]
    passed = {t.task_id for t in unity_passed_tasks()}
    pool = sorted(t.task_id for t in select_tasks(level=args.level, full=True)
                  if t.task_id in passed)
    if args.sample and args.sample < len(pool):
        pool = sorted(random.Random(args.seed).sample(pool, args.sample))
    return pool


def main(argv: list[str] | None = None) -> int:
    """Print the benchmark table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--count", type=int, default=3)
    parser.add_argument("--arenas-dir", default=None)
    parser.add_argument("--unity-passed", action="store_true",
                        help="coverage on the Unity-passed tasks instead of the 40 children's")
    parser.add_argument("--level", default=None, help="with --unity-passed: these levels")
    parser.add_argument("--sample", type=int, default=0,
                        help="with --unity-passed: a random sample of this many tasks")
    parser.add_argument("--seed", type=int, default=0, help="the sample's seed")
    parser.add_argument("--out", type=Path, default=None,
                        help="keep the variants in this folder (default: a temporary one)")
    args = parser.parse_args(argv)
    tasks = _tasks(args)
    with tempfile.TemporaryDirectory() as tmp:
        out = args.out or Path(tmp) / "variants"
        flags = ["make", *tasks, "--count", str(args.count), "--out", str(out),
                 "--workers", str(args.workers)]
        if args.arenas_dir:
            flags += ["--arenas-dir", args.arenas_dir]
        started = time.monotonic()
        status = make(flags)
        wall = time.monotonic() - started
        if status != 0:
            return status
        with (out / INDEX_FILE).open(newline="") as handle:
            rows = list(csv.DictReader(handle))
    cpu = sum(usage.ru_utime + usage.ru_stime for usage in
              (resource.getrusage(resource.RUSAGE_SELF),
               resource.getrusage(resource.RUSAGE_CHILDREN)))  # in-process and the workers
    kept = Counter(row["parent"] for row in rows if row["outcome"] == "kept")
    parents = {row["parent"] for row in rows}
    untransformable = {row["parent"] for row in rows if row["reason"] == UNTRANSFORMABLE}
    full = sum(kept[parent] >= args.count for parent in parents)
    rejected = Counter(row["reason"] for row in rows if row["outcome"] == "rejected")
    transformable = len(parents) - len(untransformable)
    table = [
        ("tasks", f"{len(parents)}", "the Unity-passed ones" if args.unity_passed else
         "the 40 children tasks"),
        (f"tasks with >= {args.count} validated variants", f"{full}",
         f"{100 * full / len(parents):.1f} % (goal >= 95 % of Unity-passed)"),
        ("  of the transformable tasks", f"{full}/{transformable}",
         f"{100 * full / max(transformable, 1):.1f} %"),
        ("variants kept", f"{sum(kept.values())}", ""),
        (f"wall time, {args.workers} workers (min)", f"{wall / 60:.1f}",
         "goal < 20 for the 40 children tasks"),
        ("CPU time (min)", f"{cpu / 60:.1f}", ""),
    ]
    table += [(f"rejected: {reason}", f"{n}", "") for reason, n in rejected.most_common()]
    print_goal_table(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
