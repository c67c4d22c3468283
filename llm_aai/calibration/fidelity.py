"""Replay the real Unity recording in the simulator, under the paper's protocol.

The recording (``shared/fixtures/unity-tutorial-recording``: arena.yaml, scripts.txt,
recording.csv, observations/) is the ground truth the simulator is calibrated against. Its
scripts are played through ``llm_aai.protocol.Episode`` with the paper's start (reset, one
no-op step, three initial observations each followed by 16 no-op steps) and every script
(the recording has 42: no cap, no run-out), on the bare ``Simulator`` so that checks can look
inside it (``after_script``).
"""

from __future__ import annotations

import csv
import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from llm_aai.arena.model import Arena
from llm_aai.arena.placement import place_arena
from llm_aai.arena.yaml_io import load_config
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


class SimulatorEnv:
    """The bare ``Simulator`` in the gymnasium shape the protocol steps.

    Unlike ``AnimalAIEnv``, ``reset(seed=s)`` places the arena with ``default_rng(s)`` itself
    (the env draws a world seed from ``s`` first), which is how the recording's replay has
    always been seeded; frames are drawn only when ``render`` and only where the protocol
    looks (one per ``play``), so a physics-only replay draws none.
    """

    def __init__(self, sim: Simulator, arena: Arena, *, render: bool):
        self.sim = sim
        self.arena = arena
        self.render = render

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Load the arena placed with ``default_rng(seed)`` (``options`` are not used)."""
        rng = np.random.default_rng(seed)
        self.sim.load(place_arena(self.arena, rng), rng)
        return self.observe(), {}

    def step(self, action):
        """One AAI step: ``action = (move, turn)``."""
        observation, reward, terminated, truncated, infos = self.play([action])
        return observation, reward, terminated, truncated, infos[-1]

    def play(self, actions: Sequence, *, observe: bool = True):
        """Steps until the actions or the episode end; the observation after the last only."""
        reward, infos = 0.0, []
        for move, turn in actions:
            result = self.sim.step(int(move), int(turn))
            reward += result.reward
            infos.append({"events": result.events, "end_reason": result.end_reason,
                          "health": result.health})
            if result.done:
                break
        observation = self.observe() if observe or self.sim.done else None
        return observation, reward, self.sim.done, False, infos

    def observe(self) -> dict[str, Any]:
        """Health, and the frame when rendering (else None)."""
        image = self.sim.observe() if self.render else None
        return {"image": image, "health": self.sim.health}


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
    sim = Simulator(resolution, render=render)
    try:
        episode = Episode(SimulatorEnv(sim, arena, render=render), REPLAY_PROTOCOL)
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
        sim.close()
