"""Which images, and which line about them, go with the message after a turn.

The paper sends the one frame taken after the reply. With ``--observe-every N`` the turn's
frames (one every N steps, the last being the view now) are sent in order with a line saying
after which steps they were taken; with ``--filmstrip`` the frames taken during the reply are
joined into one labelled image sent before the view now.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from llm_aai.filmstrip import filmstrip
from llm_aai.prompts import TurnMessages
from llm_aai.prompts.modes import frames_line
from llm_aai.protocol import ObservationPolicy, PlayedTurn
from llm_aai.protocol.modes import ModeSettings
from llm_aai.protocol.observe_every import frame_steps

__all__ = ["ShownFrames", "frames_shown"]


@dataclass(frozen=True)
class ShownFrames:
    """The images of the next message, in order, and the line about them (None: no line)."""

    images: Sequence[np.ndarray]
    line: str | None = None


def frames_shown(turn: PlayedTurn, policy: ObservationPolicy, modes: ModeSettings,
                 messages: TurnMessages) -> ShownFrames:
    """The images and line for the message after ``turn`` (see the module docstring)."""
    images = [observation["image"] for observation in turn.observations]
    if modes.observe_every is None or len(images) < 2:
        return ShownFrames(images)
    lengths = [len(run) for run in policy.runs(turn.actions)][: len(images)]
    steps = list(frame_steps(lengths))
    steps[-1] = turn.outcome.steps  # an episode that ended mid-run stopped there
    if modes.filmstrip:
        strip = filmstrip(images[:-1], steps[:-1])
        return ShownFrames([strip, images[-1]],
                           frames_line(messages, tuple(steps[:-1]), filmstrip=True))
    return ShownFrames(images, frames_line(messages, tuple(steps), filmstrip=False))
