"""A multiple-choice question about the episode, and the state it was asked in, as plain data.

The runner will log questions, send them to a model and score the answer, so a question
carries everything that needs: the words shown, the lettered choices, the true letter, the
chance of guessing it, and where the agent stood when it was asked. Nothing here touches the
env; the kinds (``llm_aai.predict.kinds``) build questions from it.
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["AskedIn", "Question", "lettered"]


@dataclass(frozen=True)
class AskedIn:
    """Where and when a question was asked, JSON-able as it stands.

    Attributes:
        turn: the number the reply about to be played will have (1 for the first).
        position: the agent's (x, y, z), Unity coordinates (y up).
        yaw: the agent's facing, degrees clockwise from +z.
        in_view: the objects in view, nearest first, as ``{name, distance, bearing}``.
    """

    turn: int
    position: tuple[float, float, float]
    yaw: float
    in_view: tuple[Mapping[str, Any], ...]

    def to_json(self) -> dict[str, Any]:
        """The state as one JSON object."""
        return {"turn": self.turn, "position": [round(v, 3) for v in self.position],
                "yaw": round(self.yaw, 2), "in_view": [dict(seen) for seen in self.in_view]}


@dataclass(frozen=True)
class Question:
    """One question of a kind, with its true answer.

    Attributes:
        kind: the registry's name for its kind (``own_outcome``, ``permanence``...).
        text: the question as the model reads it, without the choices.
        choices: ``(letter, text)`` pairs, letters ``A``, ``B``, ... in order.
        truth: the letter of the true choice.
        asked_in: the state it was asked in.
        about: what the kind asked about (the script, the object), JSON-able.
    """

    kind: str
    text: str
    choices: tuple[tuple[str, str], ...]
    truth: str
    asked_in: AskedIn
    about: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        letters = [letter for letter, _ in self.choices]
        if letters != list(string.ascii_uppercase[:len(letters)]) or len(letters) < 2:
            raise ValueError(f"{self.kind}: choices must be lettered A, B, ... (got {letters})")
        if self.truth not in letters:
            raise ValueError(f"{self.kind}: the truth {self.truth!r} is not a choice")

    @property
    def chance(self) -> float:
        """The accuracy of a uniform guess: 1 / the number of choices."""
        return 1.0 / len(self.choices)

    @property
    def true_text(self) -> str:
        """The words of the true choice."""
        return dict(self.choices)[self.truth]

    def prompt(self) -> str:
        """The question and its choices, each on a line of its own beginning ``A)``."""
        lines = [self.text, *(f"{letter}) {text}" for letter, text in self.choices)]
        return "\n".join(lines) + "\nAnswer with the letter of one choice."

    def to_json(self) -> dict[str, Any]:
        """The question as one JSON object (what a log line or a CSV row is made from)."""
        return {"kind": self.kind, "text": self.text,
                "choices": [[letter, text] for letter, text in self.choices],
                "truth": self.truth, "chance": self.chance,
                "asked_in": self.asked_in.to_json(), "about": dict(self.about)}


def lettered(texts: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """Give choice texts the letters A, B, ... in their order."""
    if len(set(texts)) != len(texts):
        raise ValueError(f"two choices read the same: {list(texts)}")
    if len(texts) > 26:
        raise ValueError("at most 26 choices")
    return tuple(zip(string.ascii_uppercase, texts, strict=False))
