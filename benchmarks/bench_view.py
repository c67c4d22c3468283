"""Benchmark of the site viewer on a large run: build time and page load times.

Run from the repository root::

    python -m benchmarks.bench_view [--tasks 40] [--trials 3] [--turns 30] [--arenas-dir DIR]

It writes a run of the paper's size with the real log store: the 40 children tasks x 3 trials,
30 scripts per episode, each turn with a 128 px JPEG frame, a reply with a Think, a position and
yaw (the initial turn sends three frames), so the site holds about 4,000 files. Then it times
``build_site`` from nothing, and a rebuild with nothing new (what ``--serve`` does on each
sealed episode). With Chromium installed it opens each page kind from disk in headless
Chromium and reports the time to the load event. Goals: build < 60 s; every page < 1 s.
Maps are drawn when the testbed arenas are found (``--arenas-dir``, ``$LLM_AAI_ARENAS``).
"""

from __future__ import annotations

import argparse
import hashlib
import math
import tempfile
import time
from pathlib import Path

import numpy as np

from llm_aai.analysis import reference_populations
from llm_aai.arena.catalog import resolve_arena_path
from llm_aai.logs import EpisodeResult, RunStore, TurnRecord, Usage
from llm_aai.settings import ResolvedRun, RunConfig
from llm_aai.view import SiteBuilder
from llm_aai.view.browser import CHROMIUM_FLAGS, find_chromium

BUILD_GOAL_S = 60.0
LOAD_GOAL_S = 1.0


def children_tasks(limit: int) -> list[tuple[str, int, float]]:
    """(task_id, level, pass_mark) of the children's tasks, from the packaged reference."""
    ref = reference_populations()
    rows = ref[(ref["population"] == "children") & (ref["scope"] == "task")]
    tasks = [(str(t), int(lv), float(pm)) for t, lv, pm in
             zip(rows["task_id"], rows["level"], rows["pass_mark"], strict=True)]
    return tasks[:limit]


def _frame(rng: np.random.Generator) -> np.ndarray:
    """A frame with sky, floor and a few blocks: compresses like a rendered one."""
    image = np.empty((128, 128, 3), dtype=np.uint8)
    image[:60] = (110, 150, 220)
    image[60:] = (150, 120, 90)
    for _ in range(4):
        x, y = rng.integers(0, 110, size=2)
        image[y:y + 18, x:x + 18] = rng.integers(0, 255, size=3)
    return image


def write_run(root: Path, tasks: int, trials: int, turns: int,
              arenas_dir: Path | None) -> Path:
    """Write the synthetic run; returns its directory."""
    rng = np.random.default_rng(0)
    chosen = children_tasks(tasks)
    arenas = {}
    for task_id, _, _ in chosen:
        try:
            arenas[task_id] = hashlib.sha256(
                resolve_arena_path(task_id, arenas_dir).read_bytes()).hexdigest()
        except (LookupError, OSError):
            pass
    store = RunStore(root / "bench-view")
    # the run's settings from the one settings type, as a real run records them
    run = ResolvedRun(RunConfig(model="claude", prompt="react", trials=trials, seed=0,
                                resolution=128, arenas_dir=arenas_dir),
                      tasks=tuple(t for t, _, _ in chosen))
    store.write_manifest({
        "schema_version": 1, "manifest_version": 3, "run_id": "bench-view",
        "run": run.to_record(),
        "agent": {"name": "llm", "litellm_model": "anthropic/claude-bench"},
        "prompt": {"sha256": "0" * 64, "system_text": "You are an animal in an arena."},
        "seeds": {"run": 0, "episodes": {}},
        "arenas": arenas,
    })
    for task_id, level, pass_mark in chosen:
        for trial in range(1, trials + 1):
            _write_episode(store, rng, task_id, level, pass_mark, trial, turns)
    return store.root


def _write_episode(store, rng, task_id, level, pass_mark, trial, turns) -> None:
    episode_id = f"{task_id}_t{trial}"
    writer = store.start_episode(episode_id)
    x, z, yaw, health = 20.0, 2.0, 0.0, 100.0
    writer.write_turn(TurnRecord(turn=0, sent_text="", steps=2, health=99.8,
                                 state={"position": [x, 0.5, z], "yaw": yaw}))
    images = [writer.save_frame(1, i, _frame(rng)) for i in range(3)]
    for turn in range(1, turns + 1):
        yaw = (yaw + float(rng.choice([-30, 0, 30]))) % 360
        x = min(39.0, max(1.0, x + math.sin(math.radians(yaw))))
        z = min(39.0, max(1.0, z + math.cos(math.radians(yaw))))
        health -= 3.0
        writer.write_turn(TurnRecord(
            turn=turn, sent_text=f"Your remaining health is {health + 3:.1f}.",
            sent_preamble="Observation captured.", sent_images=tuple(images),
            reply=f'Think("Turn {turn}: the green ball may be behind the wall.");Go(5);',
            commands=({"op": "Think", "arg": f"Turn {turn}: the green ball may be behind "
                                             "the wall."}, {"op": "Go", "arg": 5}),
            actions=((1, 0),) * 5, steps=5, health=health, reward=-0.01,
            usage=Usage(input_tokens=2000 + 300 * turn, output_tokens=60, cost_usd=0.002,
                        latency_s=1.2),
            state={"position": [x, 0.5, z], "yaw": yaw}))
        images = [writer.save_frame(turn + 1, 0, _frame(rng))]
    writer.finish(EpisodeResult(
        episode_id=episode_id, task_id=task_id, level=level, trial=trial, seed=trial,
        agent="llm", passed=False, reward=-0.3, pass_mark=pass_mark, final_health=health,
        scripts_used=turns, invalid_replies=0, end_reason="max_scripts", steps=5 * turns + 2,
        input_tokens=turns * 2000, output_tokens=turns * 60, cost_usd=turns * 0.002))


def page_load_times(site: Path, pages: dict[str, str]) -> dict[str, float] | None:
    """Seconds from navigation to the load event, per page, in headless Chromium (or None)."""
    executable = find_chromium()
    if executable is None:
        return None
    from playwright.sync_api import sync_playwright

    times = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable,
                                             args=list(CHROMIUM_FLAGS))
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        for kind, relative in pages.items():
            page.goto((site / relative).as_uri(), wait_until="load")
            times[kind] = page.evaluate(
                "(() => { const n = performance.getEntriesByType('navigation')[0];"
                " return (n.loadEventEnd - n.startTime) / 1000; })()")
        browser.close()
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=40)
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--arenas-dir", type=Path)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-view-") as scratch:
        scratch = Path(scratch)
        started = time.perf_counter()
        run = write_run(scratch, args.tasks, args.trials, args.turns, args.arenas_dir)
        print(f"wrote a run of {args.tasks} tasks x {args.trials} trials x {args.turns} turns "
              f"in {time.perf_counter() - started:.1f} s")
        builder = SiteBuilder([run], scratch / "site", args.arenas_dir)
        report = builder.build()
        files = sum(1 for p in (scratch / "site").rglob("*") if p.is_file())
        print(f"build: {report.seconds:.1f} s for {report.episodes} episodes, {files} files "
              f"(goal < {BUILD_GOAL_S:.0f} s); {len(report.without_map)} maps without arena")
        for problem in report.problems[:3]:
            print(f"  note: {problem}")
        again = builder.build()
        print(f"rebuild with nothing new: {again.seconds:.2f} s ({again.rendered} pages "
              "rendered)")
        first = children_tasks(args.tasks)[0][0]
        pages = {"runs": "index.html", "episodes": "episodes.html",
                 "episode": f"episode/bench-view/{first}_t1.html", "task": f"task/{first}.html"}
        times = page_load_times(scratch / "site", pages)
        if times is None:
            print("page loads: skipped (no Chromium; set LLM_AAI_CHROMIUM)")
        else:
            for kind, seconds in times.items():
                print(f"page load {kind:<9} {seconds * 1000:6.0f} ms (goal < "
                      f"{LOAD_GOAL_S * 1000:.0f} ms)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
