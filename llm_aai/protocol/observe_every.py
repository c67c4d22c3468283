"""Frames during a script: a frame every N steps goes with the next message (``--observe-every``).

In the paper the model sees one frame per script, so a ``Turn(180)`` can sweep past a goal
it never sees. ``EveryNSteps`` cuts a turn's actions into runs of N steps; the frame after
each run is shown, in order, the last one being the view when the script has finished, as in
the paper. Cutting does not change the trajectory (the steps are the same, only more frames
are drawn), so a run in this mode re-simulates with the same actions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from llm_aai.script.model import Action

__all__ = ["EveryNSteps", "frame_steps"]


@dataclass(frozen=True)
class EveryNSteps:
    """Cut a turn every ``every`` actions (N >= 1); the last run holds the remainder."""

    every: int

    def __post_init__(self) -> None:
        if self.every < 1:
            raise ValueError(f"observe every N steps needs N >= 1, got {self.every}")

    def runs(self, actions: Sequence[Action]) -> Sequence[Sequence[Action]]:
        """Runs of ``every`` actions, then the rest (one empty run if there are none)."""
        if not actions:
            return (actions,)
        return tuple(actions[start:start + self.every]
                     for start in range(0, len(actions), self.every))


def frame_steps(run_lengths: Sequence[int]) -> tuple[int, ...]:
    """The step of the turn after which each frame was taken (1-based, cumulative)."""
    steps, total = [], 0
    for length in run_lengths:
        total += length
        steps.append(total)
    return tuple(steps)
