"""Benchmark of the Ray executor's overhead: the same audit on local workers and on Ray.

Run from the repository root (Ray installed, ``pip install 'llm-aai[ray]'``)::

    python -m benchmarks.bench_ray [--workers 2] [--tasks children] [--budget N]

It runs ``python -m llm_aai.audit`` on the 40 children tasks (one seed, the audit's own build)
three times into temporary directories, one after the other in the same process: with
``--executor local``; with ``--executor ray`` and no address (the command starts a Ray with
``--workers`` CPUs and stops it, its start-up timed); and with ``--ray-address`` of a Ray
already running here (a head node of ``--workers`` CPUs started before the clock, as a
cluster is up before its users' commands). It prints the wall times and their ratios to the
local pool (goal: Ray within 15 %, on the running Ray: starting one is paid once per cluster,
not per command). On a shared, loaded
machine the absolute times move with the load; the ratio measured in one run is the figure to
read. It also prints the CPU seconds per episode (from the rows), what docs/ray.md's cluster
estimates start from, and checks that both executors gave the same rows.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import os
import tempfile
import time
from pathlib import Path

from benchmarks.goal_table import print_goal_table
from llm_aai.audit.run import read_rows
from llm_aai.cli.audit import main as audit
from llm_aai.oracle import DEFAULT_BUDGET


def _audit(executor: str, out: Path, args: argparse.Namespace,
           address: str | None = None) -> float:
    """Wall seconds of one audit on ``executor`` (at ``address``: a running Ray)."""
    flags = ["--out", str(out), "--tasks", args.tasks, "--workers", str(args.workers),
             "--oracle-budget", str(args.budget), "--no-progress", "--no-other-build",
             "--executor", executor]
    if address:
        flags += ["--ray-address", address]
    if args.arenas_dir:
        flags += ["--arenas-dir", args.arenas_dir]
    started = time.monotonic()
    with contextlib.redirect_stdout(io.StringIO()):  # the audit prints its whole report
        status = audit(flags)
    if status != 0:
        raise SystemExit(f"bench_ray: the {executor} audit exited {status}")
    return time.monotonic() - started


def _outcome(row):
    return dataclasses.replace(row, search_seconds=None, node_id="", host="")


def main(argv: list[str] | None = None) -> int:
    """Print the benchmark table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--tasks", default="children", help="tasks to audit (default the 40)")
    parser.add_argument("--budget", type=int, default=DEFAULT_BUDGET)
    parser.add_argument("--arenas-dir", default=None)
    args = parser.parse_args(argv)
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    from ray.cluster_utils import Cluster

    with tempfile.TemporaryDirectory() as tmp:
        walls = {name: _audit(name, Path(tmp) / name, args) for name in ("local", "ray")}
        cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": args.workers})
        try:
            walls["running"] = _audit("ray", Path(tmp) / "running", args, cluster.address)
        finally:
            cluster.shutdown()
        rows = {name: sorted(read_rows(Path(tmp) / name), key=lambda r: (r.task_id, r.seed))
                for name in walls}
    same = all([_outcome(r) for r in rows["local"]] == [_outcome(r) for r in rows[name]]
               for name in ("ray", "running"))
    cpu = [r.search_seconds for r in rows["ray"] + rows["local"]
           if r.search_seconds is not None]
    ratio = walls["running"] / walls["local"]
    print_goal_table([
        ("episodes per executor", f"{len(rows['local'])}", ""),
        ("same rows (local = ray)", "yes" if same else "NO", "goal yes"),
        (f"local wall, {args.workers} workers (s)", f"{walls['local']:.1f}", ""),
        (f"ray wall, new Ray of {args.workers} CPUs (s)", f"{walls['ray']:.1f}",
         f"start-up included: {walls['ray'] / walls['local']:.3f} x local"),
        (f"ray wall, running Ray of {args.workers} CPUs (s)", f"{walls['running']:.1f}", ""),
        ("running ray / local", f"{ratio:.3f}", "goal <= 1.15"),
        ("CPU seconds per episode", f"{sum(cpu) / len(cpu):.2f}", ""),
        ("hosts used by ray", f"{len({r.host for r in rows['ray']})}", ""),
    ])
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
