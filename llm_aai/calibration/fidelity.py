"""Replay the real Unity recording in the simulator, under the paper's protocol.

The recording (``shared/fixtures/unity-tutorial-recording``: arena.yaml, scripts.txt,
recording.csv, observations/) is the ground truth the simulator is calibrated against. Its
scripts are played through ``llm_aai.protocol.Episode`` with the paper's start (reset, one
no-op step, three initial observations each followed by 16 no-op steps) and every script
(the recording has 42: no cap, no run-out), on ``llm_aai.env.headless.HeadlessEnv`` (the
bare simulator, frames drawn only when asked) so that checks can look inside it
(``after_script``). The arena is placed with the reset seed's generator, which is how the
recording's replay has always been seeded.
"""

from __future__ import annotations

import csv
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from PIL import Image

from llm_aai.arena.yaml_io import load_config
from llm_aai.env.headless import HeadlessEnv
from llm_aai.logs.events import UNLOGGED_EVENTS
from llm_aai.protocol import PAPER_PROTOCOL, Episode
from llm_aai.sim.rules import RewardEvent
from llm_aai.sim.simulator import Simulator

REPLAY_PROTOCOL = dataclasses.replace(PAPER_PROTOCOL, max_scripts=None, run_out_clock=False)
"""The paper's start, then every recorded script; the recording ends in its last script."""

IGNORED_EVENTS = UNLOGGED_EVENTS | {"hot_zone"}
"""Events a script's replay leaves out: the recording shows goals, not decay or zone damage."""


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
    with Image.open(Path(recording_dir) / "observations" / name) as image:
        rgb = np.asarray(image.convert("RGB"))
    margin = (rgb.shape[1] - rgb.shape[0]) // 2
    return rgb[:, margin : margin + rgb.shape[0]]


def replay_recording(recording_dir: Path, *, render: bool = False, resolution: int = 512,
                     seed: int = 0,
                     after_script: Callable[[ScriptReplay, Simulator], None] | None = None,
                     ) -> Replay:
    """Replay the recording's arena and scripts; frames are kept only when ``render``.

    ``after_script`` is called after every script with its replay and the simulator, for
    checks of state the frames and health do not show (where a pushed box ended up).
    """
    recording_dir = Path(recording_dir)
    arena = load_config(recording_dir / "arena.yaml").arena()
    env = HeadlessEnv(arena, render=render, resolution=resolution)
    sim = env.simulator
    try:
        episode = Episode(env, REPLAY_PROTOCOL)
        start = episode.start(seed=seed)
        initial = [shown["image"] for shown in start.observations] if render else []
        replays = []
        for script in read_recording(recording_dir):
            if not episode.wants_reply:
                break
            turn = episode.play(script.text)
            events = [event for info in turn.outcome.infos for event in info["events"]
                      if event.kind not in IGNORED_EVENTS]
            frame = turn.observations[-1]["image"] if not sim.done else None
            replays.append(ScriptReplay(script.index, script.text, turn.outcome.steps,
                                        sim.health, script.health, events, frame,
                                        script.observation))
            if after_script is not None:
                after_script(replays[-1], sim)
        return Replay(replays, sim.total_reward, sim.end_reason, sim.state.steps, initial)
    finally:
        env.close()
