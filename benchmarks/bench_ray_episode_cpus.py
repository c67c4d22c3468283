"""Benchmark of ``--ray-episode-cpus``: the same model run at one CPU per episode and at less.

Run from the repository root (Ray installed, ``pip install 'llm-aai[ray]'``)::

    python -m benchmarks.bench_ray_episode_cpus --arenas-dir DIR [--cpus 1 0.25] [--latency 2]

It starts a two-node Ray cluster on loopback (one CPU per node, ``ray.cluster_utils.Cluster``,
its address file in a temporary ``RAY_TMPDIR`` so no other Ray on the machine is disturbed),
and plays the same model run on it once per ``--cpus`` value: 4 tasks x 2 trials of 2 scripts
at 64 px, ``--concurrency 8``, against the fake server (``llm_aai.llm.fake_server``) answering
each call after ``--latency`` seconds, as a model does. For each it prints the wall time and
the most calls the server had in flight at once. A model's episode mostly waits, so a fraction
of a CPU per episode should play more of them at once on the same cluster and take less time
(docs/ray.md, "CPUs per episode").
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import tempfile
import time
from pathlib import Path

from benchmarks.goal_table import print_goal_table
from llm_aai.llm.fake_server import FakeChatServer
from llm_aai.protocol import PAPER_PROTOCOL
from llm_aai.runner import ModelOptions, RunConfig, start_run

TASKS = "01-04-03,02-02-01,01-06-02,03-09-01"
NODE = {"num_cpus": 1, "object_store_memory": 100 * 1024 * 1024}


def _play(address: str, cpus: float, args: argparse.Namespace, out: Path) -> tuple[float, int]:
    """Wall seconds of the run at ``cpus`` per episode and the most calls in flight."""
    with FakeChatServer(default="Turn(30);\nGo(20);", latency_s=args.latency) as server:
        config = RunConfig(
            model="openai/fake", tasks=TASKS, trials=2, seed=7, arenas_dir=args.arenas_dir,
            resolution=64, concurrency=8,
            protocol=dataclasses.replace(PAPER_PROTOCOL, max_scripts=2),
            model_options=ModelOptions(api_base=server.url, max_tokens=64),
            executor="ray", ray_address=address, ray_episode_cpus=cpus)
        started = time.monotonic()
        start_run(config, out=out, run_id=f"cpus-{cpus:g}", show_progress=False)
        return time.monotonic() - started, server.max_in_flight


def main(argv: list[str] | None = None) -> int:
    """Print the benchmark table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arenas-dir", type=Path, default=None)
    parser.add_argument("--cpus", type=float, nargs="+", default=[1.0, 0.25])
    parser.add_argument("--latency", type=float, default=2.0, help="seconds per model call")
    args = parser.parse_args(argv)
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["RAY_TMPDIR"] = tmp  # this cluster's address file, nobody else's
        import ray
        from ray.cluster_utils import Cluster

        cluster = Cluster(initialize_head=True,
                          head_node_args={**NODE, "include_dashboard": False})
        cluster.add_node(**NODE)
        cluster.wait_for_nodes()
        ray.init(address=cluster.address, log_to_driver=False)
        try:
            measured = {cpus: _play(cluster.address, cpus, args, Path(tmp) / "runs")
                        for cpus in args.cpus}
        finally:
            ray.shutdown()
            cluster.shutdown()
    rows = [("episodes per run (2 nodes, 1 CPU each)", "8", "")]
    for cpus, (wall, peak) in measured.items():
        rows += [(f"--ray-episode-cpus {cpus:g}: wall (s)", f"{wall:.1f}", ""),
                 (f"--ray-episode-cpus {cpus:g}: calls in flight", f"{peak}", "of --concurrency 8")]
    print_goal_table(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
