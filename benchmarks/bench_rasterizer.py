"""Benchmark of where Mesa rasterizes: the gymnasium env under two ``LP_NUM_THREADS`` settings.

Run from the repository root::

    python -m benchmarks.bench_rasterizer [--a default] [--b mesa] [--resolution 84]

Mesa reads ``LP_NUM_THREADS`` once per process, so each setting gets its own worker process
with one ``AnimalAIEnv``; their rounds alternate (A B, B A, ...) so that both meet the same
load on a shared machine, and each pair of rounds gives a ratio. Settings: ``default`` (the
package's choice for the resolution, ``llm_aai.sim.render.rasterizer_threads``: the caller's
thread under 128 px, Mesa's own above), ``mesa`` (one rasterizer thread per core, Mesa's
default) or a number. The figure to read is the median ratio B / A and
how many pairs B won: single rounds move by a third with the machine's other users.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

from benchmarks.bench_rl import DEFAULT_TASK

_WORKER = """
import sys
from benchmarks.bench_rl import GymRounds
from llm_aai.arena.catalog import resolve_arena_path
rounds = GymRounds(resolve_arena_path(sys.argv[1]), int(sys.argv[2]))
rounds.rate(200)
print("ready", flush=True)
for line in sys.stdin:
    print(rounds.rate(int(line)), flush=True)
"""


class Worker:
    """One process stepping a gymnasium env with ``setting`` as its ``LP_NUM_THREADS``."""

    def __init__(self, setting: str, task: str, resolution: int) -> None:
        env = {key: value for key, value in os.environ.items() if key != "LP_NUM_THREADS"}
        if setting == "default":
            pass  # the package sets it when the first frame is drawn
        elif setting == "mesa":
            env["LP_NUM_THREADS"] = str(os.cpu_count() or 1)
        elif setting.isdigit():
            env["LP_NUM_THREADS"] = setting
        else:
            raise SystemExit(f"error: setting {setting!r}: use default, mesa or a number")
        self.setting = setting
        self._process = subprocess.Popen(
            [sys.executable, "-c", _WORKER, task, str(resolution)], env=env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        if self._process.stdout.readline().strip() != "ready":
            raise SystemExit(f"error: the worker for {setting!r} did not start")

    def rate(self, steps: int) -> float:
        """Steps per second over one round of ``steps``."""
        self._process.stdin.write(f"{steps}\n")
        self._process.stdin.flush()
        return float(self._process.stdout.readline())

    def close(self) -> None:
        self._process.stdin.close()
        self._process.wait(timeout=60)


def compare(a: str, b: str, *, task: str, resolution: int, rounds: int,
            steps: int) -> tuple[list[float], list[float]]:
    """Steps/s of each round of A and of B, their order alternating round by round."""
    workers = [Worker(a, task, resolution), Worker(b, task, resolution)]
    rates: tuple[list[float], list[float]] = ([], [])
    try:
        for k in range(rounds):
            order = (0, 1) if k % 2 == 0 else (1, 0)
            for index in order:
                rates[index].append(workers[index].rate(steps))
    finally:
        for worker in workers:
            worker.close()
    return rates


def main(argv: list[str] | None = None) -> None:
    """Run the comparison and print each setting's median and the paired ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--a", default="mesa", help="setting A (default: mesa)")
    parser.add_argument("--b", default="default", help="setting B (default: default)")
    parser.add_argument("--arena", default=DEFAULT_TASK, help="testbed task id")
    parser.add_argument("--resolution", type=int, default=84)
    parser.add_argument("--rounds", type=int, default=16, help="rounds of each setting")
    parser.add_argument("--steps", type=int, default=1000, help="env steps a round")
    args = parser.parse_args(argv)
    rates_a, rates_b = compare(args.a, args.b, task=args.arena, resolution=args.resolution,
                               rounds=args.rounds, steps=args.steps)
    ratios = [b / a for a, b in zip(rates_a, rates_b, strict=True)]
    print(f"gymnasium env at {args.resolution} px, {args.rounds} rounds of {args.steps} steps "
          f"each, alternated; load average {os.getloadavg()[0]:.1f}")
    for name, rates in ((f"A ({args.a})", rates_a), (f"B ({args.b})", rates_b)):
        print(f"  {name:<16} median {statistics.median(rates):7.0f} steps/s   "
              f"range {min(rates):.0f}-{max(rates):.0f}")
    print(f"  B / A, paired rounds: median {statistics.median(ratios):.3f}, "
          f"B faster in {sum(r > 1 for r in ratios)} of {len(ratios)}")


if __name__ == "__main__":
    main()
