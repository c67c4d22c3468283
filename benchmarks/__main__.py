"""``python -m benchmarks``: run every benchmark in turn."""

from benchmarks import bench_harness, bench_sim

if __name__ == "__main__":
    bench_sim.main([])
    bench_harness.main([])
