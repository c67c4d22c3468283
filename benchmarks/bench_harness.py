"""Benchmark of the evaluation harness around the model: per-turn overhead and concurrency.

Run from the repository root::

    python -m benchmarks.bench_harness [--latency 1.0] [--episodes 16] [--scripts 3]

Both parts drive the real pipeline (runner, env, renderer, litellm over HTTP, log writes)
against the local fake OpenAI-compatible server, so only the model's thinking time is fake.
The server runs in a separate process, as a real provider would: its JSON parsing must not
compete with the harness for this process's interpreter lock.

1. Overhead per turn: a run with zero model latency; everything a turn costs is harness.
   Goal: <= 5% of a 1 s model latency, i.e. <= 50 ms per turn.
2. Speedup: the same suite with a fixed model latency at concurrency 1 and 16.
   Goal: >= 12x.
"""

from __future__ import annotations

import argparse
import multiprocessing
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from llm_aai.cli.run import build_parser
from llm_aai.llm.fake_server import FakeChatServer
from llm_aai.logs import RunStore, read_turns
from llm_aai.runner.app import run_from_args

REPO = Path(__file__).resolve().parents[1]
TASKS = "01-04-03,01-06-02,01-21-01,01-23-01"
REPLY = 'Think("Looking around.");Turn(30);Go(2);'


def _serve(latency: float, urls, stop) -> None:
    with FakeChatServer(default=REPLY, latency_s=latency) as server:
        urls.put(server.url)
        stop.wait()


@contextmanager
def fake_provider(latency: float):
    """The fake OpenAI-compatible server in its own process; yields its base URL."""
    context = multiprocessing.get_context("spawn")
    urls, stop = context.Queue(), context.Event()
    process = context.Process(target=_serve, args=(latency, urls, stop), daemon=True)
    process.start()
    try:
        yield urls.get(timeout=60)
    finally:
        stop.set()
        process.join(timeout=10)


def _run(url: str, out: Path, *, concurrency: int, trials: int, scripts: int, arenas: str,
         resolution: int) -> tuple[float, int]:
    args = build_parser().parse_args([
        "--model", "openai/fake", "--api-base", url, "--tasks", TASKS, "--trials", str(trials),
        "--max-scripts", str(scripts), "--concurrency", str(concurrency), "--out", str(out),
        "--run-id", f"c{concurrency}", "--arenas-dir", arenas, "--resolution", str(resolution),
        "--no-progress"])
    started = time.perf_counter()
    run_dir, _ = run_from_args(args)
    elapsed = time.perf_counter() - started
    turns = sum(len([t for t in read_turns(d.parent) if t.reply is not None])
                for d in RunStore(run_dir).episodes_dir.glob("*/result.json"))
    return elapsed, turns


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--episodes", type=int, default=16, help="a multiple of 4")
    parser.add_argument("--scripts", type=int, default=8)
    parser.add_argument("--resolution", type=int, default=512)
    parser.add_argument("--arenas-dir", default=str(REPO.parent / "shared/testbed/competition"))
    args = parser.parse_args(argv)
    trials = max(1, args.episodes // 4)
    common = dict(scripts=args.scripts, arenas=args.arenas_dir, resolution=args.resolution)
    with tempfile.TemporaryDirectory() as tmp:
        with fake_provider(0.0) as url:
            _run(url, Path(tmp) / "warm", concurrency=1, trials=1, **{**common, "scripts": 1})
            elapsed, turns = _run(url, Path(tmp) / "o", concurrency=1, trials=1, **common)
        overhead_ms = 1000 * elapsed / turns
        with fake_provider(args.latency) as url:
            serial, _ = _run(url, Path(tmp) / "s", concurrency=1, trials=trials, **common)
            parallel, _ = _run(url, Path(tmp) / "p", concurrency=16, trials=trials, **common)
    speedup = serial / parallel
    share = overhead_ms / (10 * args.latency)
    print(f"{'measure':<40}{'value':>12}  goal")
    print(f"{'harness overhead per turn (ms)':<40}{overhead_ms:>12.1f}")
    print(f"{'  as % of a ' + str(args.latency) + ' s model latency':<40}{share:>11.1f}%  <= 5%")
    print(f"{'suite time, concurrency 1 (s)':<40}{serial:>12.1f}")
    print(f"{'suite time, concurrency 16 (s)':<40}{parallel:>12.1f}")
    print(f"{'speedup 1 -> 16':<40}{speedup:>11.1f}x  >= 12x")
    print(f"({4 * trials} episodes x {args.scripts} scripts, {args.resolution} px)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
