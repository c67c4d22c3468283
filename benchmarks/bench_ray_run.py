"""Benchmark of a run's overhead on Ray: one heuristic run local, on a running Ray, on a new Ray.

Run from the repository root (Ray installed, ``pip install 'llm-aai[ray]'``)::

    python -m benchmarks.bench_ray_run --arenas-dir DIR [--rounds 3] [--level 1-4] [--trials 1]

Each round runs the command ``python -m llm_aai.run --model heuristic --resolution 64
--concurrency 2 --no-progress`` three times, each in a process of its own and timed whole
(the interpreter's start and the package's imports included, as a user waits for them):
``--executor local``; ``--executor ray --ray-address`` of a Ray already running here (a head
node of ``--cpus`` CPUs started once, before the first round, as a cluster is up before its
users' commands); and ``--executor ray`` with no address (the command starts a Ray and stops
it). The kinds alternate within each round, so a shared machine's load weighs on all three
alike, and the table gives each kind's median wall time over the rounds and its ratio to
local's. It checks that every run wrote the same summary rows as the first local run, apart
from timing and placement (``duration_s``, ``node_id``, ``host``), and prints the load
average before and after.
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.goal_table import print_goal_table

KINDS = ("local", "running", "new")
"""The executors compared: local threads, a Ray already running, a Ray the command starts."""

PLACEMENT = {"duration_s", "node_id", "host"}
"""The summary's columns that say when and where an episode ran, not what it did."""


def _command(kind: str, out: Path, args: argparse.Namespace, address: str) -> list[str]:
    command = [sys.executable, "-m", "llm_aai.run", "--model", "heuristic", "--level",
               args.level, "--trials", str(args.trials), "--seed", "7", "--resolution", "64",
               "--concurrency", str(args.cpus), "--no-progress", "--arenas-dir",
               args.arenas_dir, "--out", str(out), "--run-id", "bench"]
    if kind == "local":
        return command + ["--executor", "local"]
    if kind == "running":
        return command + ["--executor", "ray", "--ray-address", address]
    return command + ["--executor", "ray"]


def _run(kind: str, out: Path, args: argparse.Namespace, address: str) -> float:
    """Wall seconds of one whole command; its summary is in ``out/bench``."""
    started = time.monotonic()
    done = subprocess.run(_command(kind, out, args, address), capture_output=True, text=True)
    wall = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"bench_ray_run: the {kind} run exited {done.returncode}:\n"
                         f"{done.stderr[-2000:]}")
    return wall


def _rows(out: Path) -> list[dict[str, str]]:
    with (out / "bench" / "summary.csv").open(newline="") as handle:
        rows = [{key: value for key, value in row.items() if key not in PLACEMENT}
                for row in csv.DictReader(handle)]
    return sorted(rows, key=lambda row: row["episode_id"])


def _load() -> str:
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    """Print the benchmark table; exit 1 if any run's rows differ from local's."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arenas-dir", required=True, help="the testbed's arena files")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--level", default="1-4")
    parser.add_argument("--trials", type=int, default=1)
    parser.add_argument("--cpus", type=int, default=2,
                        help="the running Ray's CPUs and every run's --concurrency")
    args = parser.parse_args(argv)
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    from ray.cluster_utils import Cluster

    load_before = _load()
    walls: dict[str, list[float]] = {kind: [] for kind in KINDS}
    rows: dict[str, list[list[dict[str, str]]]] = {kind: [] for kind in KINDS}
    cluster = Cluster(initialize_head=True,
                      head_node_args={"num_cpus": args.cpus, "include_dashboard": False})
    try:
        with tempfile.TemporaryDirectory(prefix="bench-ray-run-") as tmp:
            for round_ in range(args.rounds):
                for kind in KINDS:
                    out = Path(tmp) / f"{kind}-{round_}"
                    walls[kind].append(_run(kind, out, args, cluster.address))
                    rows[kind].append(_rows(out))
    finally:
        cluster.shutdown()
    reference = rows["local"][0]
    same = all(run == reference for kind in KINDS for run in rows[kind])
    median = {kind: statistics.median(walls[kind]) for kind in KINDS}
    table = [
        ("episodes per run", f"{len(reference)}", f"level {args.level}, {args.trials} trials"),
        ("rounds (kinds alternated)", f"{args.rounds}", f"load {load_before} -> {_load()}"),
        ("same summary rows", "yes" if same else "NO", "goal yes (timing, placement aside)"),
    ]
    for kind, label in zip(KINDS, ("local", "running Ray", "new Ray"), strict=True):
        spread = ", ".join(f"{wall:.1f}" for wall in walls[kind])
        table.append((f"{label} wall, median (s)", f"{median[kind]:.1f}", f"rounds: {spread}"))
    for kind, label in (("running", "running Ray"), ("new", "new Ray")):
        table.append((f"{label} / local", f"{median[kind] / median['local']:.2f}", ""))
    print_goal_table(table)
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
