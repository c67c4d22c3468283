"""Replay the real Unity recording in the simulator, under the paper's protocol.

The recording (``shared/fixtures/unity-tutorial-recording``: arena.yaml, scripts.txt,
recording.csv, observations/) is the ground truth the simulator is calibrated against.
The protocol is the LLM-AAI harness's (docs/animal-ai-facts.md §7): reset; one no-op step; three
initial observations each followed by 16 no-op steps; then each script's frame actions, with
the observation taken right after the script's last step. This module is a calibration tool
(used by the fidelity test and ``python -m llm_aai.sim.contact_sheet``); the ``Simulator``
itself never reads files.
"""

from __future__ import annotations

import csv
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from llm_aai.sim.rules import RewardEvent
from llm_aai.sim.simulator import Simulator

INITIAL_OBSERVATIONS = 3
NOOPS_AFTER_INITIAL_OBSERVATION = 16


@dataclass(frozen=True)
class RecordedScript:
    """One row of recording.csv: the script, the health shown after it, its frame file."""

    index: int
    text: str
    health: float | None
    observation: str | None


@dataclass
class ScriptReplay:
    """What the simulator did for one script."""

    index: int
    text: str
    steps: int
    health: float
    recorded_health: float | None
    events: list[RewardEvent] = field(default_factory=list)
    frame: np.ndarray | None = None
    recorded_frame: str | None = None


@dataclass
class Replay:
    """The whole replayed episode."""

    scripts: list[ScriptReplay]
    total_reward: float
    end_reason: str | None
    steps: int
    initial_frames: list[np.ndarray]


def read_recording(recording_dir: Path) -> list[RecordedScript]:
    """Scripts 1..N from scripts.txt with their recorded health and frame (csv rows 1..N-1).

    The last script (the one that touched the GoodGoal) has no row: the episode ended in it.
    """
    texts = [line for line in (recording_dir / "scripts.txt").read_text().splitlines() if line]
    rows: dict[int, tuple[float, str]] = {}
    with (recording_dir / "recording.csv").open(newline="") as handle:
        for row in csv.DictReader(handle):
            shown = row["health_after"].rstrip(".")  # the harness printed "96.9."
            rows[int(row["turn"])] = (float(shown), row["observation"])
    scripts = []
    for k, text in enumerate(texts, start=1):
        health, frame = rows.get(k, (None, None))
        scripts.append(RecordedScript(k, text, health, frame))
    return scripts


def read_recorded_frame(recording_dir: Path, name: str) -> np.ndarray:
    """A recorded observation as the 512x512 RGB image the camera made.

    The harness saved the frames 516 px wide, a 2 px white margin each side of the image;
    the margin is cropped so recorded and simulated frames line up pixel for pixel.
    """
    from PIL import Image

    with Image.open(Path(recording_dir) / "observations" / name) as image:
        rgb = np.asarray(image.convert("RGB"))
    margin = (rgb.shape[1] - rgb.shape[0]) // 2
    return rgb[:, margin : margin + rgb.shape[0]]


def _script_actions(text: str) -> list[tuple[int, int]]:
    from llm_aai.script import parse_script

    return list(parse_script(text).actions())


def replay_recording(recording_dir: Path, *, render: bool = False, resolution: int = 512,
                     seed: int = 0,
                     after_script: Callable[[ScriptReplay, Simulator], None] | None = None,
                     ) -> Replay:
    """Replay the recording's arena and scripts; frames are kept only when ``render``.

    ``after_script`` is called after every script with its replay and the simulator, for
    checks of state the frames and health do not show (where a pushed box ended up).
    """
    from llm_aai.arena.placement import place_arena
    from llm_aai.arena.yaml_io import load_config

    recording_dir = Path(recording_dir)
    arena = load_config(recording_dir / "arena.yaml").arena()
    rng = np.random.default_rng(seed)
    placed = place_arena(arena, rng)
    sim = Simulator(resolution, render=render)
    try:
        sim.load(placed, rng)
        sim.step(0, 0)
        initial = []
        for _ in range(INITIAL_OBSERVATIONS):
            if render:
                initial.append(sim.observe())
            for _ in range(NOOPS_AFTER_INITIAL_OBSERVATION):
                sim.step(0, 0)
        replays = []
        for script in read_recording(recording_dir):
            actions = _script_actions(script.text)
            events: list[RewardEvent] = []
            taken = 0
            for move, turn in actions:
                result = sim.step(move, turn)
                taken += 1
                events += [e for e in result.events if e.kind not in ("decay", "hot_zone")]
                if result.done:
                    break
            frame = sim.observe() if render and not sim.done else None
            replays.append(ScriptReplay(script.index, script.text, taken, sim.health,
                                        script.health, events, frame, script.observation))
            if after_script is not None:
                after_script(replays[-1], sim)
            if sim.done:
                break
        return Replay(replays, sim.total_reward, sim.end_reason, sim.state.steps, initial)
    finally:
        sim.close()
