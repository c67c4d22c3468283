"""What a script touches first: the model's own (own outcome) or another (counterfactual).

A what-if (``llm_aai.protocol.what_if``) plays a script on an exact copy of the episode and
undoes it, so the first goal or zone a script will touch is known before it runs: for the
model's own reply this is what the live episode then does, for a script it did not send it
is the only truth there is. The alternatives are built from the scene the model saw: face a
ball or zone in view (whole 6-degree turn steps, as ``Turn`` plays them) and go a little
past it (the prompt's measured distances per ``Go(n)``).
"""

from __future__ import annotations

import math
import re

import numpy as np

from llm_aai.arena.objects import Kind
from llm_aai.perception.words import ball_or_zone_word
from llm_aai.predict.base import Asking, Posed, QuestionKind
from llm_aai.protocol.what_if import what_if

__all__ = ["COUNTERFACTUAL", "GO_METRES", "OUTCOMES", "OWN_OUTCOME", "choices_for",
           "outcome_text", "toward"]

NONE_OF_THESE = "none of these before the commands end"
_TOUCHED = {
    "GoodGoal": "a green ball", "GoodGoalBounce": "a green ball",
    "GoodGoalMulti": "a yellow ball", "GoodGoalMultiBounce": "a yellow ball",
    "BadGoal": "a red ball", "BadGoalBounce": "a red ball",
    "DeathZone": "a red death zone", "hot_zone": "an orange hot zone",
}
OUTCOMES = ("a green ball", "a yellow ball", "a red ball", "a red death zone",
            "an orange hot zone", NONE_OF_THESE)
"""The choices of both kinds, in the prompt's words for the balls and zones of the testbed.

An arena with balls the testbed never has (today's Animal-AI: decoys, decaying goals...) adds
their words before the last choice (``choices_for``)."""

GO_METRES = ((0, 0.0), (3, 1.3), (5, 3.0), (10, 8.0), (20, 21.0), (30, 36.0))
"""(n, metres) a ``Go(n)`` covers from standing, sliding included (the README's "Units",
the same numbers the prompt gives the model)."""
PAST_METRES = 3.0
"""How far past a target's centre an alternative aims, by the table: the table counts the
slide after the last step, which a script's own outcome does not (the next turn has it), and
food is taken only by running into it."""
TURN_STEP = 6
"""Degrees a ``Turn`` frame turns; the rest of a ``Turn(d)`` is dropped."""


def outcome_text(first_event: str | None) -> str:
    """The choice that names a what-if's first event (``GoodGoal`` -> ``a green ball``).

    Raises:
        ValueError: an event kind the choices have no words for.
    """
    if first_event is None:
        return NONE_OF_THESE
    if first_event in _TOUCHED:
        return _TOUCHED[first_event]
    word = ball_or_zone_word(first_event)
    if word is None:
        raise ValueError(f"no outcome choice for the event {first_event!r}; known: "
                         f"{sorted(_TOUCHED)} and the balls of perception.words")
    return ("an " if word[0] in "aeiou" else "a ") + word


def choices_for(asking: Asking) -> tuple[str, ...]:
    """``OUTCOMES``, with the words of the arena's other balls before the last choice."""
    extra = []
    for thing in asking.view.things.values():
        if thing.kind is Kind.GOAL:
            text = outcome_text(thing.name)
            if text not in OUTCOMES and text not in extra:
                extra.append(text)
    return OUTCOMES[:-1] + tuple(extra) + OUTCOMES[-1:]


def toward(distance: float, bearing: float) -> str:
    """A script that faces a point at ``bearing`` and goes a little past its ``distance``."""
    steps = round(bearing / TURN_STEP)
    metres = [m for _, m in GO_METRES]
    go = math.ceil(float(np.interp(distance + PAST_METRES, metres, [n for n, _ in GO_METRES])))
    go = min(max(go, 1), 35)
    turn = f"Turn({steps * TURN_STEP});" if steps else ""
    return f"{turn}Go({go});"


def _played_first(asking: Asking, script: str) -> Posed | None:
    result = what_if(asking.episode, script)
    if result.error is not None:
        return None  # a refused script plays the protocol's no-ops: nothing to predict
    return Posed({"script": script}, choices_for(asking), {"script": script},
                 result.first_event)


def _pose_own(asking: Asking) -> Posed | None:
    if asking.reply is None or not asking.episode.wants_reply:
        return None
    return _played_first(asking, asking.reply)


def _same_script(a: str, b: str) -> bool:
    return re.sub(r"\s+", "", a) == re.sub(r"\s+", "", b)


def _pose_counterfactual(asking: Asking) -> Posed | None:
    if not asking.episode.wants_reply:
        return None
    view = asking.view
    scripts = []
    for index in sorted(view.in_view):
        if view.things[index].kind not in (Kind.GOAL, Kind.ZONE):
            continue
        script = toward(*view.where(index))
        if script not in scripts and not (asking.reply and _same_script(script, asking.reply)):
            scripts.append(script)
    if not scripts:
        return None
    return _played_first(asking, asking.rng.choice(scripts))


def _first_touched(asking: Asking, posed: Posed) -> str:
    return outcome_text(posed.facts)


OWN_OUTCOME = QuestionKind(
    name="own_outcome",
    template="When the commands you just sent run, what will the animal touch first?",
    pose=_pose_own, truth=_first_touched,
    summary="what the model's own script will touch first (played on a copy beforehand)")

COUNTERFACTUAL = QuestionKind(
    name="counterfactual",
    template=("Suppose that instead of your commands you had sent these: {script} "
              "What would the animal have touched first?"),
    pose=_pose_counterfactual, truth=_first_touched,
    summary="what a script toward a ball or zone in view would touch first")
