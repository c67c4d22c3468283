"""A small memory of what the agent has seen in one episode, for the permanence question.

Object permanence can only be asked about something the agent saw earlier and cannot see
now, so the runner feeds this recorder after the start and after every turn (``record``);
it keeps, per object, the last turn it was in view and its words then. It is a recorder
beside the episode, not part of it: feeding it steps nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from llm_aai.arena.objects import Kind
from llm_aai.predict.scene import look

__all__ = ["Sighted", "Sightings"]


@dataclass(frozen=True)
class Sighted:
    """The last time one object was in view.

    Attributes:
        index: the object's place in the arena's placed objects.
        noun: the prompt's words for it.
        kind: its kind (goal, wall, zone...).
        turn: the replies played when it was last seen (0: the first observation).
        centre: where it was then, Unity coordinates.
    """

    index: int
    noun: str
    kind: Kind
    turn: int
    centre: tuple[float, float, float]


class Sightings:
    """Per episode: every object seen so far and the last turn it was seen."""

    def __init__(self) -> None:
        self._last: dict[int, Sighted] = {}

    def record(self, episode: Any) -> None:
        """Note what is in view in ``episode`` now (call after the start and every turn)."""
        view = look(episode.env)
        turn = episode.totals.replies
        for index in view.in_view:
            thing = view.things[index]
            self._last[index] = Sighted(index, thing.noun, thing.kind, turn, thing.centre)

    def remembered(self) -> tuple[Sighted, ...]:
        """Every object seen so far, by index."""
        return tuple(self._last[i] for i in sorted(self._last))
