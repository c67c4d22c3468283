"""Benchmark of the embedded simulator: physics speed, frame time, build time, memory.

Run from the repository root::

    python -m benchmarks.bench_sim [--arena PATH] [--steps N] [--frames N]

It reports AAI steps per second with rendering off (goal >= 5,000, i.e. 300x real time),
the time of a ``Simulator.snapshot()`` plus ``restore()`` (goal well under 1 ms: the oracle's
search takes one per simulated branch),
milliseconds per 512 x 512 observation (goal <= 25), the time to build an arena (MJCF,
compile, renderer upload) and the process's peak resident memory.
"""

from __future__ import annotations

import argparse
import resource
import time
from pathlib import Path

import numpy as np

from llm_aai.arena.catalog import resolve_arena_path
from llm_aai.arena.placement import place_arena
from llm_aai.arena.yaml_io import load_config
from llm_aai.sim import Simulator

DEFAULT_TASK = "04-10-01"  # walls, a hot zone, a death zone and goals: a typical arena


def _placed(path: Path, seed: int):
    rng = np.random.default_rng(seed)
    return place_arena(load_config(path).arena(), rng), rng


def bench_physics(path: Path, steps: int) -> float:
    """AAI steps per second with random actions, reloading whenever an episode ends."""
    sim = Simulator(render=False)
    placed, rng = _placed(path, 0)
    sim.load(placed, rng)
    actions = rng.integers(0, 3, size=(steps, 2)).tolist()
    start = time.perf_counter()
    for move, turn in actions:
        if sim.step(move, turn).done:
            sim.load(placed, rng)
    return steps / (time.perf_counter() - start)


def bench_snapshot(path: Path, repeats: int = 2000) -> float:
    """Microseconds per snapshot() + restore() pair in the middle of an episode."""
    sim = Simulator(render=False)
    placed, rng = _placed(path, 0)
    sim.load(placed, rng)
    for k in range(40):
        sim.step(1, k % 3)
    start = time.perf_counter()
    for _ in range(repeats):
        sim.restore(sim.snapshot())
    return (time.perf_counter() - start) / repeats * 1e6


def bench_render(path: Path, frames: int, resolution: int) -> tuple[float, float]:
    """(build seconds, ms per observation) with rendering on."""
    sim = Simulator(resolution)
    placed, rng = _placed(path, 0)
    start = time.perf_counter()
    sim.load(placed, rng)
    sim.observe()  # the first frame compiles shaders; count it as part of the build
    build = time.perf_counter() - start
    start = time.perf_counter()
    for k in range(frames):
        sim.step(1, k % 3)
        sim.observe()
        if sim.done:
            sim.load(placed, rng)
    per_frame = (time.perf_counter() - start) / frames * 1000
    sim.close()
    return build, per_frame


def main(argv: list[str] | None = None) -> int:
    """Print the benchmark table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arena", type=Path, default=None, help="arena YAML to benchmark")
    parser.add_argument("--steps", type=int, default=20000, help="physics-only AAI steps")
    parser.add_argument("--frames", type=int, default=200, help="observations to render")
    parser.add_argument("--resolution", type=int, default=512)
    args = parser.parse_args(argv)
    # found like the run command finds arenas: $LLM_AAI_ARENAS, then the download cache
    path = args.arena or resolve_arena_path(DEFAULT_TASK)
    rate = bench_physics(path, args.steps)
    snapshot_us = bench_snapshot(path)
    build, frame_ms = bench_render(path, args.frames, args.resolution)
    # Frame time above includes one AAI step; subtract it to report the observation alone.
    observe_ms = frame_ms - 1000.0 / rate
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    rows = [
        ("arena", path.name, ""),
        ("AAI steps/s, physics only", f"{rate:,.0f}", "goal >= 5,000"),
        ("real-time factor", f"{rate * 0.06:,.0f}x", "goal >= 300x"),
        ("us per snapshot() + restore()", f"{snapshot_us:,.0f}", "goal <= 500"),
        (f"ms per {args.resolution}x{args.resolution} observation", f"{observe_ms:.1f}",
         "goal <= 25"),
        ("arena build + renderer upload (s)", f"{build:.2f}", ""),
        ("peak RSS (MB)", f"{peak_mb:.0f}", ""),
    ]
    width = max(len(r[0]) for r in rows)
    for name, value, goal in rows:
        print(f"{name:<{width}}  {value:>12}  {goal}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
