"""Benchmark of the Ray executor's overhead: the same audit on local workers and on Ray.

Run from the repository root (Ray installed, ``pip install 'llm-aai[ray]'``)::

    python -m benchmarks.bench_ray [--workers 2] [--tasks children] [--budget N] [--rounds 3]

It audits the 40 children tasks (one seed, the audit's own build) with ``python -m
llm_aai.audit``'s entry point, into temporary directories, in ``--rounds`` rounds. Each round
plays the audit on the local pool (``--executor local``), on a Ray already running here
(``--ray-address`` of a head node of ``--workers`` CPUs, started before the clock, as a cluster
is up before its users' commands) and, for the choice the issue asked to measure, on a pool of
``--workers`` long-lived Ray actors each playing episode after episode (``ray.util.ActorPool``,
the same episode function, no stop gate). The order turns round each round, so a machine
whose load drifts favours none. Then one audit on a Ray the command starts and stops itself,
its start-up timed.

It prints each round's wall times and the median of each round's ratio to the local pool
(goal: the running Ray within 15 %). On a shared, loaded machine the absolute times move with
the load; the ratios within a round are the figures to read. It also prints the CPU seconds
per episode (from the rows), what docs/ray.md's cluster estimates start from, and checks that
every executor gave the same rows.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import os
import statistics
import tempfile
import time
from pathlib import Path

from benchmarks.goal_table import print_goal_table
from llm_aai.arena.catalog import children_subset, resolve_arena_path, select_tasks
from llm_aai.audit import AuditSettings
from llm_aai.audit.run import audit_episode, read_rows
from llm_aai.cli.audit import main as audit
from llm_aai.oracle import DEFAULT_BUDGET

GOAL = 1.15
"""The running Ray's wall time over the local pool's, at most (issue #36)."""


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


class _Player:
    """A Ray actor that plays audit episodes one after another in its own process."""

    def play(self, *args):
        return audit_episode(*args)


def _actor_pool(args: argparse.Namespace, address: str) -> tuple[float, list]:
    """Wall seconds and rows of the same episodes on ``--workers`` actors of a running Ray."""
    import ray
    from ray.util import ActorPool

    tasks = (children_subset() if args.tasks == "children"
             else select_tasks(tasks=args.tasks, full=True))
    settings = AuditSettings(budget=args.budget)
    work = [(task.task_id, task.level, 1, str(resolve_arena_path(task.task_id, args.arenas_dir)),
             settings) for task in tasks]
    started = time.monotonic()
    ray.init(address=address, log_to_driver=False, configure_logging=False)
    try:
        player = ray.remote(num_cpus=1)(_Player)
        pool = ActorPool([player.remote() for _ in range(args.workers)])
        rows = list(pool.map_unordered(lambda actor, job: actor.play.remote(*job), work))
    finally:
        ray.shutdown()
    return time.monotonic() - started, rows


def _outcome(row):
    return dataclasses.replace(row, search_seconds=None, node_id="", host="")


def _same(rows: dict[str, list]) -> bool:
    outcomes = {name: sorted((_outcome(r) for r in found), key=lambda r: (r.task_id, r.seed))
                for name, found in rows.items()}
    first = next(iter(outcomes.values()))
    return all(found == first for found in outcomes.values())


def main(argv: list[str] | None = None) -> int:
    """Print the benchmark table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--tasks", default="children", help="tasks to audit (default the 40)")
    parser.add_argument("--budget", type=int, default=DEFAULT_BUDGET)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--arenas-dir", default=None)
    args = parser.parse_args(argv)
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    from ray.cluster_utils import Cluster

    walls: dict[str, list[float]] = {"local": [], "running": [], "actors": []}
    rows: dict[str, list] = {}
    with tempfile.TemporaryDirectory() as tmp:
        cluster = Cluster(initialize_head=True, head_node_args={
            "num_cpus": args.workers, "include_dashboard": False})
        try:
            for round_ in range(args.rounds):
                order = ["local", "running", "actors"]
                for name in order if round_ % 2 == 0 else order[::-1]:
                    out = Path(tmp) / f"{name}-{round_}"
                    if name == "actors":
                        wall, rows[name] = _actor_pool(args, cluster.address)
                    else:
                        wall = _audit("ray" if name == "running" else "local", out, args,
                                      cluster.address if name == "running" else None)
                        rows[name] = read_rows(out)
                    walls[name].append(wall)
        finally:
            cluster.shutdown()
        new_ray = _audit("ray", Path(tmp) / "new", args)
        rows["new"] = read_rows(Path(tmp) / "new")
    same = _same(rows)
    ratio = {name: statistics.median(w / local for w, local
                                     in zip(walls[name], walls["local"], strict=True))
             for name in ("running", "actors")}
    local = statistics.median(walls["local"])
    cpu = [r.search_seconds for found in rows.values() for r in found
           if r.search_seconds is not None]

    def seconds(name: str) -> str:
        return ", ".join(f"{w:.1f}" for w in walls[name])

    print_goal_table([
        ("episodes per audit", f"{len(rows['local'])}", ""),
        ("same rows (every executor)", "yes" if same else "NO", "goal yes"),
        (f"local pool, {args.workers} workers (s)", f"{local:.1f}", seconds("local")),
        (f"ray tasks, running Ray of {args.workers} CPUs (s)",
         f"{statistics.median(walls['running']):.1f}", seconds("running")),
        (f"ray actor pool, {args.workers} actors (s)",
         f"{statistics.median(walls['actors']):.1f}", seconds("actors")),
        ("running ray / local (median of rounds)", f"{ratio['running']:.3f}",
         f"goal <= {GOAL}"),
        ("actor pool / local (median of rounds)", f"{ratio['actors']:.3f}", ""),
        (f"ray tasks, new Ray of {args.workers} CPUs (s)", f"{new_ray:.1f}",
         f"its start-up included: {new_ray / local:.3f} x the local median"),
        ("CPU seconds per episode", f"{sum(cpu) / len(cpu):.2f}", ""),
    ])
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
