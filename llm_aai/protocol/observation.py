"""Which frames of a turn go with the next message: the observation mode of an episode.

The paper shows the model one frame per turn, taken right after the turn's last step
(``LastFrame``). An ``ObservationPolicy`` says where to cut a turn's actions into runs; the
frame after each run goes with the next message, in order. Frames during a script (one every
N steps) are a policy that cuts every N actions. Cutting never changes the trajectory:
rendering does not touch the simulation, it only decides which frames are drawn.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from llm_aai.script.model import Action


class ObservationPolicy(Protocol):
    """Cuts a turn's actions into runs, each ending at a frame the model will be shown."""

    def runs(self, actions: Sequence[Action]) -> Sequence[Sequence[Action]]:
        """The runs, in order; together exactly ``actions`` (one empty run if there are none)."""
        ...


class LastFrame:
    """The paper's policy: one frame per turn, after its last step (or the current one)."""

    def runs(self, actions: Sequence[Action]) -> Sequence[Sequence[Action]]:
        """The whole turn as one run."""
        return (actions,)


LAST_FRAME = LastFrame()
