"""Questions for the predict probe: what the model expects, scored against what is true.

The probe asks, before a reply's script runs, a multiple-choice question whose true answer
the simulator knows exactly (a what-if on a copy of the episode, ``llm_aai.protocol.what_if``,
or standing still on a copy). This package is the question library only: pure data in (the
live episode, the reply, the agent's sightings so far) and out (a ``Question``); it calls no
model and writes no file, so the runner, the built-in agents and the tests all use it alike.

Public API:

* ``Question`` / ``AskedIn`` (``question``): a question, its lettered choices, its truth and
  chance, and the state it was asked in; ``Question.prompt()`` is what the model reads.
* ``KINDS`` / ``ask(name, Asking(...))`` (``registry``): the kinds (``own_outcome``,
  ``counterfactual``, ``permanence``, ``dynamics``), and a question of one, or None when it
  cannot be asked now.
* ``Sightings`` (``sightings``): what the agent has seen this episode, fed after every turn.
* ``read_answer(text, choices)`` (``answers``): the letter a reply names, or None.
"""

from llm_aai.predict.answers import read_answer
from llm_aai.predict.base import Asking, Posed, QuestionKind
from llm_aai.predict.question import AskedIn, Question
from llm_aai.predict.registry import KINDS, ask, kind
from llm_aai.predict.sightings import Sighted, Sightings

__all__ = ["KINDS", "AskedIn", "Asking", "Posed", "Question", "QuestionKind", "Sighted",
           "Sightings", "ask", "kind", "read_answer"]
