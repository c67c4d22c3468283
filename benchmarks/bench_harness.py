"""Benchmark of the evaluation harness around the model: per-turn overhead and concurrency.

Run from the repository root::

    python -m benchmarks.bench_harness [--latency 1.0] [--episodes 16] [--scripts 8]

Both parts drive the real pipeline (runner, env, renderer, litellm over HTTP, log writes)
against the local fake server, so only the model's thinking time is fake. The server runs in
a separate process, as a real provider would: its JSON parsing must not compete with the
harness for this process's interpreter lock. It answers in Anthropic's dialect for the
default model (``claude``), so the measured client path is the one the README's runs take;
``--model openai/fake`` measures the OpenAI SDK's path instead (slower: the SDK re-validates
the whole history on every call, a cost that grows with the conversation).

1. Overhead per turn: episodes of the paper's length (up to 30 scripts) with zero model
   latency, so all the time is harness: episode set-up, simulation and rendering, frame files,
   the client library, HTTP, log writes. Divided by the turns played. The fake server's own
   request handling is measured in its process and reported apart: with a real provider it
   is part of the model's latency. Goal: <= 5% of a 1 s model latency, i.e. <= 50 ms.
2. Speedup: a suite with a fixed model latency at concurrency 1 and 16 (``--scripts`` per
   episode, 8 by default to keep the serial run near two minutes). Goal: >= 12x.
"""

from __future__ import annotations

import argparse
import dataclasses
import multiprocessing
import os
import tempfile
import threading
import time
from collections import defaultdict
from contextlib import contextmanager
from pathlib import Path

from llm_aai.env import AnimalAIEnv
from llm_aai.llm.client import LiteLLMClient
from llm_aai.llm.fake_server import FakeChatServer
from llm_aai.logs import RunStore, read_turns
from llm_aai.logs.store import EpisodeWriter
from llm_aai.protocol import PAPER_PROTOCOL
from llm_aai.runner import ModelOptions, RunConfig, start_run

TASKS = "01-04-03,01-06-02,01-21-01,01-23-01"
REPLY = 'Think("Looking around.");Turn(30);Go(2);'
DEFAULT_MODEL = "anthropic/claude-sonnet-4-6"
PAPER_SCRIPTS = 30

#: What the overhead is made of: (label, class, methods whose wall time counts for it).
PARTS = (
    ("simulation and rendering", AnimalAIEnv, ("reset", "step", "play")),
    ("frame files (JPEG by default)", EpisodeWriter, ("save_frame",)),
    ("model calls (client + HTTP + server)", LiteLLMClient, ("_attempt",)),
    ("log records", EpisodeWriter, ("write_turn", "finish")),
)


def _serve(latency: float, urls, stop, busy) -> None:
    with FakeChatServer(default=REPLY, latency_s=latency) as server:
        urls.put(server.url)
        stop.wait()
        busy.put(server.busy_s)


class FakeProvider:
    """The fake server in its own process (``root_url``; ``busy_s`` once it has stopped)."""

    def __init__(self, latency: float):
        context = multiprocessing.get_context("spawn")
        self._urls, self._busy = context.Queue(), context.Queue()
        self._stop = context.Event()
        self._process = context.Process(target=_serve, daemon=True,
                                        args=(latency, self._urls, self._stop, self._busy))
        self.root_url = ""
        self.busy_s = 0.0

    def __enter__(self) -> FakeProvider:
        self._process.start()
        self.root_url = self._urls.get(timeout=60).removesuffix("/v1")
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self.busy_s = self._busy.get(timeout=10)
        self._process.join(timeout=10)


class Stopwatch:
    """Adds up the wall time spent in chosen methods (benchmark-only instrumentation)."""

    def __init__(self) -> None:
        self.totals: dict[str, float] = defaultdict(float)
        self._lock = threading.Lock()

    @contextmanager
    def watching(self, parts=PARTS):
        originals = [(owner, name, getattr(owner, name))
                     for _, owner, names in parts for name in names]
        try:
            for label, owner, names in parts:
                for name in names:
                    setattr(owner, name, self._timed(label, getattr(owner, name)))
            yield self
        finally:
            for owner, name, original in originals:
                setattr(owner, name, original)

    def _timed(self, label: str, method):
        def timed(*args, **kwargs):
            started = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                with self._lock:
                    self.totals[label] += time.perf_counter() - started
        return timed


def _api_base(root_url: str, model: str) -> str:
    """litellm's Anthropic provider appends ``/v1/messages``; OpenAI-style ones want ``/v1``."""
    return root_url if model.startswith("anthropic/") else f"{root_url}/v1"


def _run(url: str, out: Path, *, model: str, concurrency: int, trials: int, scripts: int,
         arenas: str | None, resolution: int) -> tuple[float, int]:
    """Run the suite; returns (wall seconds, model turns played)."""
    config = RunConfig(
        model=model, tasks=TASKS, trials=trials, concurrency=concurrency, resolution=resolution,
        protocol=dataclasses.replace(PAPER_PROTOCOL, max_scripts=scripts),
        arenas_dir=Path(arenas) if arenas else None,
        model_options=ModelOptions(api_base=_api_base(url, model)))
    started = time.perf_counter()
    run_dir = start_run(config, out=out, run_id=f"c{concurrency}", show_progress=False).run_dir
    elapsed = time.perf_counter() - started
    turns = sum(len([t for t in read_turns(d.parent) if t.reply is not None])
                for d in RunStore(run_dir).episodes_dir.glob("*/result.json"))
    return elapsed, turns


def measure_overhead(tmp: Path, common: dict) -> None:
    """Print the per-turn overhead and what it is made of."""
    with FakeProvider(0.0) as provider:
        _run(provider.root_url, tmp / "warm", concurrency=1, trials=1,
             **{**common, "scripts": 1})  # imports, shader compilation, first connections
    with FakeProvider(0.0) as provider, Stopwatch().watching() as watch:
        elapsed, turns = _run(provider.root_url, tmp / "overhead", concurrency=1, trials=1,
                              **{**common, "scripts": PAPER_SCRIPTS})
    per_turn = 1000 * elapsed / turns
    server = 1000 * provider.busy_s / turns
    print(f"harness overhead per turn, {turns} turns of 4 episodes of up to {PAPER_SCRIPTS} "
          "scripts, zero model latency:")
    accounted = 0.0
    for label, _, _ in PARTS:
        ms = 1000 * watch.totals[label] / turns
        accounted += ms
        print(f"  {label:<44}{ms:>8.1f} ms")
        if label.startswith("model calls"):
            print(f"    {'of which the fake server handling it':<42}{server:>8.1f} ms")
    print(f"  {'everything else (prompt, parsing, runner)':<44}{per_turn - accounted:>8.1f} ms")
    print(f"  {'total':<44}{per_turn:>8.1f} ms   {per_turn / 10:.1f}% of 1 s (goal <= 5%)")
    print(f"  {'total without the fake server':<44}{per_turn - server:>8.1f} ms   "
          f"{(per_turn - server) / 10:.1f}% of 1 s")


def measure_speedup(tmp: Path, common: dict, *, latency: float, trials: int) -> None:
    """Print the suite's wall time at concurrency 1 and 16 with a fixed model latency."""
    with FakeProvider(latency) as provider:
        serial, turns = _run(provider.root_url, tmp / "serial", concurrency=1, trials=trials,
                             **common)
        parallel, _ = _run(provider.root_url, tmp / "parallel", concurrency=16,
                           trials=trials, **common)
    print(f"suite of {4 * trials} episodes x {common['scripts']} scripts ({turns} turns), "
          f"model latency {latency:g} s:")
    print(f"  {'concurrency 1':<44}{serial:>8.1f} s")
    print(f"  {'concurrency 16':<44}{parallel:>8.1f} s")
    print(f"  {'speedup':<44}{serial / parallel:>8.1f} x   (goal >= 12x)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--episodes", type=int, default=16, help="a multiple of 4")
    parser.add_argument("--scripts", type=int, default=8, help="per episode, for the speedup")
    parser.add_argument("--resolution", type=int, default=512)
    parser.add_argument("--model", default=DEFAULT_MODEL,
                        help="litellm model whose client path is measured (default: %(default)s)")
    parser.add_argument("--arenas-dir", default=None,
                        help="testbed directory (default: the run command's own lookup)")
    parser.add_argument("--skip-speedup", action="store_true", help="measure the overhead only")
    args = parser.parse_args(argv)
    # The fake server ignores keys; a dummy one keeps any real key in the environment from
    # being sent even to localhost.
    os.environ["ANTHROPIC_API_KEY"] = os.environ["OPENAI_API_KEY"] = "fake-key-for-localhost"
    common = dict(model=args.model, scripts=args.scripts, arenas=args.arenas_dir,
                  resolution=args.resolution)
    print(f"client path: {args.model}; {args.resolution} px observations")
    with tempfile.TemporaryDirectory() as tmp:
        measure_overhead(Path(tmp), common)
        if not args.skip_speedup:
            measure_speedup(Path(tmp), common, latency=args.latency,
                            trials=max(1, args.episodes // 4))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
