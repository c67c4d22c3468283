"""Play a list of scripts in an arena under the paper's protocol, one turn at a time.

This is the engine of ``python -m llm_aai.play`` and of the worked-example recorder
(``llm_aai.prompts.examples``). It drives the same ``llm_aai.protocol.Episode`` as the episode
runner (reset, the initial observations, one script per turn, a no-op for a reply that does
not parse) but takes its scripts from a list instead of an agent and logs nothing, so the
demonstration recorder exercises exactly the protocol the runner uses, without an agent or a
run directory. It plays every script it is given (no cap) and does not run out the clock.

Turn 0 is the initial observations. Its health is the value the paper's harness showed the
model: the health when the first observation was taken, although 48 no-op steps follow
(docs/animal-ai-facts.md §7). Its reward covers every step taken before the first script.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from llm_aai.logs.events import logged_events
from llm_aai.protocol import PAPER_PROTOCOL, Episode, EpisodeProtocol, ScriptControl, StepOutcome
from llm_aai.protocol.what_if import WhatIf, what_if

__all__ = [
    "WHAT_IF_MARK",
    "PlayedTurn",
    "frame_name",
    "play_scripts",
    "read_scripts_file",
    "save_frames",
]

@dataclass(frozen=True)
class PlayedTurn:
    """One turn of a played episode.

    Attributes:
        turn: 0 for the initial observations, then 1.. for each script.
        script: the script text as given (None for turn 0).
        health: the health shown to a player after this turn (see the module docstring).
        reward: reward gained during this turn.
        done: the episode ended during this turn.
        frames: the images a player would be shown after this turn (three for turn 0).
        steps: AAI steps taken during this turn.
        events: kinds of the reward events of this turn (goals, zones), in order.
        error: why the script was not played (it did not parse); one no-op step was taken.
        end_reason: the simulator's reason for the end of the episode, if it ended.

    """

    turn: int
    script: str | None
    health: float
    reward: float
    done: bool
    frames: tuple[np.ndarray, ...]
    steps: int = 0
    events: tuple[str, ...] = ()
    error: str | None = None
    end_reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The turn as one line of ``python -m llm_aai.play`` output (frames left out)."""
        data: dict[str, Any] = {
            "turn": self.turn,
            "script": self.script,
            "health": round(self.health, 4),
            "reward": round(self.reward, 6),
            "done": self.done,
            "steps": self.steps,
            "events": list(self.events),
        }
        if self.end_reason:
            data["end_reason"] = self.end_reason
        if self.error is not None:
            data["error"] = self.error
        return data

    def to_json_line(self) -> str:
        """The turn as a compact JSON line."""
        return json.dumps(self.to_json(), ensure_ascii=False)


WHAT_IF_MARK = "?"
"""A script given as ``? SCRIPT`` is asked as a what-if (``llm_aai.protocol.what_if``)."""


def read_scripts_file(path: str | Path) -> list[str]:
    """Read one script per line; blank lines and lines starting with ``#`` are skipped."""
    text = Path(path).read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def _events(outcome: StepOutcome) -> tuple[str, ...]:
    return tuple(event["kind"] for event in logged_events(outcome.infos))


def _end_reason(outcome: StepOutcome) -> str | None:
    if not outcome.done or not outcome.infos:
        return None
    return outcome.infos[-1].get("end_reason")


def play_scripts(
    env: Any,
    scripts: Iterable[str],
    *,
    seed: int | None = 0,
    arena: str | Path | None = None,
    protocol: EpisodeProtocol = PAPER_PROTOCOL,
    mode: str = "strict",
) -> Iterator[PlayedTurn | WhatIf]:
    """Reset ``env`` and play ``scripts``, yielding each turn as soon as it has been played.

    A script written ``? SCRIPT`` is not played but asked: a ``WhatIf`` says what it would
    have done from that point, and the episode goes on exactly as if it had not been asked.

    Args:
        env: an ``llm_aai.env.AnimalAIEnv`` (or any gymnasium env with the same
            observations: ``image`` and ``health``).
        scripts: script texts, one per turn.
        seed: the reset seed (fixes the arena's random placements).
        arena: switch the env to this arena (path or task id) on reset.
        protocol: the step counts of the paper's protocol; its script cap and run-out are
            not applied (every given script is played, the clock is not run out).
        mode: ``"strict"`` or ``"lenient"`` script parsing.

    Yields:
        Turn 0 (the initial observations), then one turn per script, stopping after the
        turn in which the episode ends. A script that does not parse yields a turn with
        ``error`` set, after the protocol's no-op step(s), exactly as the runner treats it.

    """
    settings = dataclasses.replace(protocol, max_scripts=None, run_out_clock=False)
    episode = Episode(env, settings, control=ScriptControl(mode))  # type: ignore[arg-type]
    start = episode.start(seed=seed, arena=None if arena is None else str(arena))
    outcome = start.outcome
    yield PlayedTurn(
        turn=0, script=None, health=start.first_observation_health, reward=outcome.reward,
        done=outcome.done, frames=tuple(np.asarray(o["image"]) for o in start.observations),
        steps=outcome.steps, events=_events(outcome), end_reason=_end_reason(outcome),
    )
    remaining = iter(scripts)
    while episode.wants_reply:  # checked first: a script is not taken after the end
        text = next(remaining, None)
        if text is None:
            return
        if text.startswith(WHAT_IF_MARK):
            yield what_if(episode, text[len(WHAT_IF_MARK):].strip())
            continue
        turn = episode.play(text)
        outcome = turn.outcome
        yield PlayedTurn(
            turn=turn.number, script=text, health=outcome.health, reward=outcome.reward,
            done=outcome.done, frames=tuple(np.asarray(o["image"]) for o in turn.observations),
            steps=outcome.steps, events=_events(outcome), error=turn.decision.error,
            end_reason=_end_reason(outcome),
        )


def frame_name(turn: int, index: int) -> str:
    """File name of a frame: ``turn-000-0.png`` (the run logs' naming, without the folder)."""
    return f"turn-{turn:03d}-{index}.png"


def save_frames(turn: PlayedTurn, directory: str | Path,
                resolution: int | None = None) -> tuple[str, ...]:
    """Save a turn's frames as PNG files in ``directory``; return their names.

    Args:
        turn: the played turn.
        directory: created if missing.
        resolution: if given, frames are resized to this side first (to keep files small).

    """
    from PIL import Image

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    names = []
    for index, frame in enumerate(turn.frames):
        image = Image.fromarray(np.asarray(frame, dtype=np.uint8)[:, :, :3])
        if resolution is not None and image.size != (resolution, resolution):
            image = image.resize((resolution, resolution), Image.Resampling.LANCZOS)
        name = frame_name(turn.turn, index)
        image.save(directory / name, optimize=True)
        names.append(name)
    return tuple(names)

