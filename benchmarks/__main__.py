"""``python -m benchmarks``: run every benchmark in turn."""

from benchmarks import bench_harness, bench_rl, bench_sim, bench_view

if __name__ == "__main__":
    bench_sim.main([])
    bench_harness.main([])
    bench_view.main([])
    bench_rl.main([])
