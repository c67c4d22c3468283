"""What every question kind is made of, and what it is given when asked.

A kind is one entry of the registry (``llm_aai.predict.registry``): a template, a function
that finds in the scene what to ask about and the choices (or says the question cannot be
asked now), and a function that finds the true choice. Keeping the three apart is what lets a
new kind be added in one file, and lets a test check each kind's truth on its own.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from llm_aai.predict.scene import View, look
from llm_aai.predict.sightings import Sightings
from llm_aai.protocol.episode import Episode

__all__ = ["Asking", "Posed", "QuestionKind"]


@dataclass
class Asking:
    """What a question is asked from: the live episode just before its next script runs.

    Attributes:
        episode: the live episode; a kind may play on copies of it (``what_if``,
            ``env.snapshot``/``restore``) but must leave it exactly as it was.
        reply: the model's reply about to be played (the own-outcome question needs it).
        sightings: what the agent has seen so far in this episode.
        rng: where a kind draws which of several subjects to ask about.
    """

    episode: Episode
    reply: str | None = None
    sightings: Sightings = field(default_factory=Sightings)
    rng: random.Random = field(default_factory=lambda: random.Random(0))

    @cached_property
    def view(self) -> View:
        """The world now (read once per question)."""
        return look(self.episode.env)

    @property
    def turn(self) -> int:
        """The number the reply about to be played will have."""
        return self.episode.totals.replies + 1


@dataclass(frozen=True)
class Posed:
    """A question a kind can ask now, before its truth is known.

    Attributes:
        fields: the values the kind's template is filled with.
        choices: the choices' texts, in the order they are lettered.
        about: what is asked about, JSON-able, kept with the question.
        facts: what the truth function needs (the kind's own business).
    """

    fields: Mapping[str, str]
    choices: tuple[str, ...]
    about: Mapping[str, Any] = field(default_factory=dict)
    facts: Any = None


@dataclass(frozen=True)
class QuestionKind:
    """One kind of question.

    Attributes:
        name: its registry name.
        template: the question's text, with ``{field}`` places filled from ``Posed.fields``.
        pose: finds what to ask about and the choices, or None when it cannot be asked now.
        truth: the text of the true choice for what was posed.
        summary: one line on what it asks (for ``--help`` and the docs).
    """

    name: str
    template: str
    pose: Callable[[Asking], Posed | None]
    truth: Callable[[Asking, Posed], str]
    summary: str
