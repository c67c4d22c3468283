"""Benchmark of a what-if: one script played on a copy of the episode and undone, at 512 px.

Run from the repository root::

    python -m benchmarks.bench_what_if [--task ID] [--questions N] [--resolution PX]

A predict-then-observe probe asks what-ifs inside live episodes (the truth of a counterfactual
question is the script played on a copy of the state), so their cost is added to the turns
they are asked in. It reports the wall time per what-if (goal <= 50 ms at 512 px) for scripts
of 0-20 steps, split into the copy and restore and the rest (the steps and the last frame,
which a played script would cost anyway).
"""

from __future__ import annotations

import argparse
import statistics
import time

from llm_aai.env import AnimalAIEnv
from llm_aai.protocol import Episode
from llm_aai.protocol.what_if import what_if

DEFAULT_TASK = "04-10-01"  # walls, a hot zone, a death zone and goals: a typical arena
QUESTIONS = ("Go(5);", "Turn(90);Go(10);", "Turn(-45);Go(20);", "Turn(180);", "Go(-3);")
GOAL_MS = 50.0


def bench(task: str, questions: int, resolution: int) -> tuple[list[float], float]:
    """Milliseconds per what-if over ``questions`` of them, and per snapshot + restore."""
    env = AnimalAIEnv(task, resolution=resolution)
    try:
        episode = Episode(env)
        episode.start(seed=0)
        episode.play("Go(3);Turn(30);")
        for script in QUESTIONS:  # warm up: the first frame of each kind sets up Mesa
            what_if(episode, script)
        times = []
        for k in range(questions):
            start = time.perf_counter()
            what_if(episode, QUESTIONS[k % len(QUESTIONS)])
            times.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        for _ in range(200):
            env.restore(env.snapshot())
        copy_ms = (time.perf_counter() - start) * 1000 / 200
    finally:
        env.close()
    return times, copy_ms


def main() -> None:
    """Print the per-question wall time against the goal."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default=DEFAULT_TASK)
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--resolution", type=int, default=512)
    args = parser.parse_args()
    times, copy_ms = bench(args.task, args.questions, args.resolution)
    median = statistics.median(times)
    print(f"what-if at {args.resolution} px on {args.task}: median {median:.1f} ms, "
          f"p90 {statistics.quantiles(times, n=10)[-1]:.1f} ms over {len(times)} questions "
          f"(snapshot + restore {copy_ms:.2f} ms); goal <= {GOAL_MS:.0f} ms: "
          f"{'met' if median <= GOAL_MS else 'NOT met'}")


if __name__ == "__main__":
    main()
