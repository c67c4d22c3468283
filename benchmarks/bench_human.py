"""Benchmark of keyboard mode: key press to new frame with several participants at once.

Run from the repository root::

    python -m benchmarks.bench_human [--participants 4] [--resolution 256] [--seconds 25]
                                     [--task 01-21-01] [--arenas-dir DIR]

It starts ``python -m llm_aai.human serve`` in its own process (as a study would run) and
connects that many keyboard participants over real WebSockets from this process. Each taps
an arrow key (left or right, so the level does not end early), waits for the frame whose step
acted on the press, lets go, and waits 100-300 ms, like a person; meanwhile every session's
clock steps in real time (a step every 60 ms). The latency of a press is the time from
sending it to receiving the frame of the step that acted on it. Goal: p95 < 100 ms at 256 px
with 4 participants. The load average is printed beside it (the machine may be shared).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import numpy as np
from websockets.asyncio.client import connect

from llm_aai.human.app import COOKIE

GOAL_MS = 100.0


async def participant(url: str, name: str, seconds: float, seed: int) -> list[float]:
    """One keyboard participant's press-to-frame latencies, in milliseconds."""
    rng = random.Random(seed)
    async with httpx.AsyncClient(base_url=url, timeout=120) as client:
        response = await client.post("/api/sessions", json={"participant": name,
                                                            "interface": "keys"})
        response.raise_for_status()
        token = client.cookies[COOKIE]
    host = url.removeprefix("http://").rstrip("/")
    latencies: list[float] = []
    async with connect(f"ws://{host}/ws/keys", additional_headers={
            "cookie": f"{COOKIE}={token}", "origin": url.rstrip("/")},
            open_timeout=60) as socket:
        view = await _next_view(socket, lambda v: v["phase"] == "playing")
        sequence = 0
        ends = time.monotonic() + seconds
        while time.monotonic() < ends and view["phase"] == "playing":
            sequence += 1
            key = rng.choice(["ArrowLeft", "ArrowRight"])
            sent = time.perf_counter()
            await socket.send(json.dumps({"held": [key], "seq": sequence}))
            view = await _next_view(socket, lambda v, s=sequence: v["applied"] >= s
                                    or v["phase"] != "playing")
            if view["phase"] == "playing":
                await socket.recv()  # the frame follows its view
                latencies.append((time.perf_counter() - sent) * 1000)
            sequence += 1
            await socket.send(json.dumps({"held": [], "seq": sequence}))
            await asyncio.sleep(rng.uniform(0.1, 0.3))
    return latencies


async def _next_view(socket, wanted) -> dict:
    while True:
        message = await socket.recv()
        if isinstance(message, bytes):
            continue
        data = json.loads(message)
        if data["type"] == "view" and wanted(data):
            return data


async def measure(url: str, participants: int, seconds: float) -> list[list[float]]:
    """Every participant's latencies, played at once."""
    return await asyncio.gather(*(participant(url, f"bench-{n}", seconds, n)
                                  for n in range(participants)))


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and print the latencies against the goal."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--participants", type=int, default=4)
    parser.add_argument("--resolution", type=int, default=256)
    parser.add_argument("--seconds", type=float, default=25.0,
                        help="how long each participant plays (the level lasts 30 s)")
    parser.add_argument("--task", default="01-21-01", help="a level of t = 500 (30 s)")
    parser.add_argument("--arenas-dir", type=Path)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-human-") as out:
        command = [sys.executable, "-m", "llm_aai.human", "serve", "--tasks", args.task,
                   "--resolution", str(args.resolution), "--port", "0", "--out", out,
                   "--max-sessions", str(args.participants)]
        if args.arenas_dir:
            command += ["--arenas-dir", str(args.arenas_dir)]
        server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        try:
            url = _served_url(server)
            load_before = os.getloadavg()[0]
            started = time.monotonic()
            results = asyncio.run(measure(url, args.participants, args.seconds))
            wall = time.monotonic() - started
            load_after = os.getloadavg()[0]
        finally:
            server.terminate()
            server.wait(30)
    every = np.array([value for latencies in results for value in latencies])
    print(f"keyboard mode, {args.participants} participants at {args.resolution} px on "
          f"{os.cpu_count()} cores, {wall:.0f} s; load average (1 min) {load_before:.2f} "
          f"before, {load_after:.2f} after")
    for number, latencies in enumerate(results):
        values = np.array(latencies)
        print(f"  participant {number}: {len(values)} presses, p50 "
              f"{np.percentile(values, 50):.1f} ms, p95 {np.percentile(values, 95):.1f} ms")
    p50, p95 = np.percentile(every, 50), np.percentile(every, 95)
    print(f"key press to new frame: {len(every)} presses, p50 {p50:.1f} ms, p95 {p95:.1f} ms, "
          f"max {every.max():.1f} ms (goal p95 < {GOAL_MS:.0f} ms: "
          f"{'met' if p95 < GOAL_MS else 'NOT met'})")


def _served_url(server: subprocess.Popen) -> str:
    """The URL the server prints once it answers."""
    assert server.stdout is not None
    for line in server.stdout:
        found = re.search(r"serving (http://\S+/)", line)
        if found:
            return found.group(1)
    raise RuntimeError(f"the server exited ({server.wait()}) before serving")


if __name__ == "__main__":
    main()
