"""``python -m benchmarks``: run every benchmark in turn, each in a process of its own.

Why separate processes: Mesa reads ``LP_NUM_THREADS`` once per process, when the first frame
is drawn, and the package chooses it from that frame's size (``llm_aai.sim.render``). In one
process the 512 px frames of ``bench_sim`` chose for ``bench_rl``'s 84 px ones too, which then
measured a setting no reinforcement-learning user gets.
"""

import subprocess
import sys

BENCHMARKS = ("bench_sim", "bench_harness", "bench_view", "bench_rl", "bench_what_if")

if __name__ == "__main__":
    for name in BENCHMARKS:
        subprocess.run([sys.executable, "-m", f"benchmarks.{name}"], check=True)
