"""The question kinds by name, and asking one: the probe's single entry point.

Adding a kind is one ``QuestionKind`` in its own module and one line here; nothing else
dispatches on kind names.
"""

from __future__ import annotations

from llm_aai.predict.base import Asking, QuestionKind
from llm_aai.predict.dynamics import DYNAMICS
from llm_aai.predict.outcomes import COUNTERFACTUAL, OWN_OUTCOME
from llm_aai.predict.permanence import PERMANENCE
from llm_aai.predict.question import AskedIn, Question, lettered
from llm_aai.predict.scene import pose_of

__all__ = ["KINDS", "ask", "kind"]

KINDS: dict[str, QuestionKind] = {k.name: k for k in (OWN_OUTCOME, COUNTERFACTUAL,
                                                      PERMANENCE, DYNAMICS)}


def kind(name: str) -> QuestionKind:
    """The kind called ``name``.

    Raises:
        KeyError: no such kind (the message lists the known ones).
    """
    if name not in KINDS:
        raise KeyError(f"unknown question kind {name!r}; known: {', '.join(KINDS)}")
    return KINDS[name]


def ask(name: str, asking: Asking) -> Question | None:
    """A question of kind ``name`` about the episode now, with its truth.

    None if it cannot be asked now (each kind says when: see its module).

    The live episode is left exactly as it was: kinds play only on copies of it.
    """
    chosen = kind(name)
    posed = chosen.pose(asking)
    if posed is None:
        return None
    truth = chosen.truth(asking, posed)
    choices = lettered(posed.choices)
    letters = [letter for letter, text in choices if text == truth]
    if len(letters) != 1:
        raise RuntimeError(f"{name}: the truth {truth!r} is not exactly one of the choices")
    position, yaw = pose_of(asking.episode.env)
    seen = tuple({"name": s.name, "distance": s.distance, "bearing": s.bearing}
                 for s in asking.episode.env.in_view())
    return Question(chosen.name, chosen.template.format(**posed.fields), choices, letters[0],
                    AskedIn(asking.turn, position, yaw, seen), dict(posed.about))
