"""Object permanence: is a ball seen earlier and out of view now still there, and where?

Asked only about a ball the agent saw at an earlier turn (``Sightings``), that it cannot see
now, and whose words name it alone in the arena (two red balls could not be told apart).
The truth is where the simulator has it now, from the eye: ahead within the field of view
(so hidden behind something), to the left or right, or behind; or gone, for a collected
yellow ball. A ball within ``MARGIN_DEG`` of a border between two answers is not asked
about, so the truth never hangs on a degree.
"""

from __future__ import annotations

from llm_aai.arena.objects import Kind
from llm_aai.predict.base import Asking, Posed, QuestionKind

__all__ = ["FIELD_HALF_DEG", "MARGIN_DEG", "PERMANENCE", "side_of"]

FIELD_HALF_DEG = 50.0
"""Half the eye's 100-degree field of view: nearer straight ahead than this, an unseen object
is hidden, not out of view (as ``llm_aai.grounding.scene`` judges it)."""
BEHIND_DEG = 130.0
"""Further round than this, an object is behind the agent rather than beside it."""
MARGIN_DEG = 10.0

AHEAD_HIDDEN = "ahead of you, but hidden behind something"
GONE = "it is no longer in the arena"
CHOICES = ("to your left", "to your right", "behind you", AHEAD_HIDDEN, GONE)


def side_of(bearing: float) -> str | None:
    """The choice for an object at ``bearing`` (degrees, right > 0), None near a border."""
    size = abs(bearing)
    if min(abs(size - FIELD_HALF_DEG), abs(size - BEHIND_DEG)) < MARGIN_DEG:
        return None
    if size <= FIELD_HALF_DEG:
        return AHEAD_HIDDEN
    if size > BEHIND_DEG:
        return "behind you"
    return "to your right" if bearing > 0 else "to your left"


def _truth_now(asking: Asking, index: int) -> str | None:
    view = asking.view
    if index not in view.things:
        return GONE
    return side_of(view.where(index)[1])


def _pose(asking: Asking) -> Posed | None:
    view = asking.view
    if view.dark:
        return None  # in the dark nothing is in view, and nothing is hidden by anything
    candidates = [seen for seen in asking.sightings.remembered()
                  if seen.kind is Kind.GOAL and seen.index not in view.in_view
                  and view.unique(seen.index)]
    candidates = [seen for seen in candidates if _truth_now(asking, seen.index) is not None]
    if not candidates:
        return None
    seen = asking.rng.choice(candidates)
    return Posed({"noun": seen.noun}, CHOICES,
                 {"object": seen.noun, "index": seen.index, "last_seen_turn": seen.turn},
                 seen.index)


def _truth(asking: Asking, posed: Posed) -> str:
    answer = _truth_now(asking, posed.facts)
    if answer is None:  # _pose asks only about objects with a clear answer
        raise RuntimeError(f"permanence: object {posed.facts} has no clear answer now")
    return answer


PERMANENCE = QuestionKind(
    name="permanence",
    template="Earlier you saw a {noun}. You cannot see it now. Where is the {noun} now?",
    pose=_pose, truth=_truth,
    summary="where a ball seen earlier and out of view now is (or that it is gone)")
