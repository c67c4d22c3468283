"""Intuitive dynamics: where will a moving object in view be a few seconds from now?

Asked only when something in view moves: the episode is copied (``env.snapshot``), the agent
stands still for ``SECONDS`` (no-op steps), the objects' places are read, and the copy is
undone (``env.restore``), so the live episode goes on as if nothing was asked. An object
moves if it went more than ``MOVING_METRES`` in the first ``MOVING_STEPS`` steps. The truth
compares where it ends with where it is now, seen from where the agent stands now: along the
line of sight (nearer, farther) or across it (left, right), whichever is clearly the larger,
or about where it is when it ends within ``STAYS_METRES``. An object whose two parts are
close (within ``CLEAR_RATIO``), or a copy that ends the episode before the time is up (the
ball reaches the agent, the clock runs out), is not asked about.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from llm_aai.predict.base import Asking, Posed, QuestionKind
from llm_aai.predict.scene import View, look
from llm_aai.script.model import NOOP

__all__ = ["DYNAMICS", "SECONDS", "STEP_SECONDS", "moved"]

STEP_SECONDS = 0.06
"""One AAI step: 3 physics steps of 0.02 s."""
SECONDS = 3
STEPS = round(SECONDS / STEP_SECONDS)
MOVING_STEPS = 5
MOVING_METRES = 0.1
STAYS_METRES = 0.5
CLEAR_RATIO = 1.5

NEARER, FARTHER = "nearer to you", "farther from you"
LEFT, RIGHT = "further to your left", "further to your right"
STAYS = "about where it is now"
CHOICES = (NEARER, FARTHER, LEFT, RIGHT, STAYS)


def moved(eye: tuple[tuple[float, float, float], float], before: tuple[float, float, float],
          after: tuple[float, float, float]) -> str | None:
    """The choice for an object going from ``before`` to ``after`` seen from ``eye``.

    None when neither the part along the line of sight nor the part across it is clearly
    the larger.
    """
    (x, _, z), _ = eye
    dx, dz = after[0] - before[0], after[2] - before[2]
    if math.hypot(dx, dz) < STAYS_METRES:
        return STAYS
    sight = np.array([before[0] - x, before[2] - z])
    sight /= max(float(np.linalg.norm(sight)), 1e-9)
    along = dx * sight[0] + dz * sight[1]
    across = dx * sight[1] - dz * sight[0]  # the line of sight turned 90 degrees right
    if abs(along) >= CLEAR_RATIO * abs(across):
        return FARTHER if along > 0 else NEARER
    if abs(across) >= CLEAR_RATIO * abs(along):
        return RIGHT if across > 0 else LEFT
    return None


def _stand_still(env: Any, steps: int) -> bool:
    """Step no-ops without drawing; True if the episode is still running after them."""
    _, _, terminated, truncated, _ = env.play([np.array(NOOP)] * steps, observe=False)
    return not (terminated or truncated)


def _futures(env: Any) -> tuple[View, View] | None:
    """The world after ``MOVING_STEPS`` and after ``STEPS`` of standing still, on a copy."""
    saved = env.snapshot()
    try:
        if not _stand_still(env, MOVING_STEPS):
            return None
        soon = look(env)
        if not _stand_still(env, STEPS - MOVING_STEPS):
            return None
        return soon, look(env)
    finally:
        env.restore(saved)


def _pose(asking: Asking) -> Posed | None:
    view = asking.view
    if view.dark or not view.in_view or not asking.episode.wants_reply:
        return None
    futures = _futures(asking.episode.env)
    if futures is None:
        return None
    soon, later = futures
    answers = {}
    for index in sorted(view.in_view):
        if not view.unique(index) or index not in later.things or index not in soon.things:
            continue
        now = view.things[index].centre
        if math.dist(now, soon.things[index].centre) <= MOVING_METRES:
            continue
        answer = moved(view.eye, now, later.things[index].centre)
        if answer is not None:
            answers[index] = answer
    if not answers:
        return None
    index = asking.rng.choice(sorted(answers))
    noun = view.things[index].noun
    return Posed({"noun": noun, "seconds": str(SECONDS)}, CHOICES,
                 {"object": noun, "index": index, "seconds": SECONDS}, answers[index])


def _where_it_ends(asking: Asking, posed: Posed) -> str:
    return posed.facts  # found by _pose, on the copy it stood still in


DYNAMICS = QuestionKind(
    name="dynamics",
    template=("An object in view is moving: the {noun}. If the animal stood still for the "
              "next {seconds} seconds instead of running your commands, where would the {noun} "
              "be then, compared with now and seen from where you stand?"),
    pose=_pose, truth=_where_it_ends,
    summary="where a moving object in view will be after a few seconds of standing still")
