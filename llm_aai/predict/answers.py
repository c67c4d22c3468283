"""Reading the letter a model answered, leniently but never by guessing.

Models answer a multiple-choice question in many shapes: ``B``, ``b)``, ``(B)``,
``B) the green ball``, ``The answer is B.``, ``Answer: B``, or the choice's words alone.
All of these read as the one letter they name. A reply that names two letters (``A or B``),
a letter that is no choice, or words that fit several choices reads as no answer (None), and
is scored wrong by whoever scores it: a guess made here would inflate the accuracy.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["read_answer"]

_EXPLICIT = re.compile(r"\banswer\s*(?:is|:|=|-)?\s*\(?([A-Za-z])\b\)?", re.IGNORECASE)
_ALONE = re.compile(r"^\W*\(?([A-Za-z])\)?\W*$")
_BRACKETED = re.compile(r"\(([A-Za-z])\)")
_CLOSED = re.compile(r"(?<![A-Za-z(])([A-Za-z])\)")
_CAPITAL = re.compile(r"(?<![A-Za-z'(])([A-Z])(?![A-Za-z')])(?:\s+([a-z]+))?")
_JOINING = frozenset({"or", "and", "nor", "is", "because", "since", "as"})
"""Words after a lone capital that keep it a letter (``A or B``); any other lower-case word
makes it a word (``A red ball``, ``I think``)."""


def _mentions(text: str) -> set[str]:
    """The letters a reply names, each as a choice's letter would be written."""
    letters = {m.upper() for m in _BRACKETED.findall(text)}
    letters |= {m.upper() for m in _CLOSED.findall(text)}
    for capital, word in _CAPITAL.findall(text):
        if not word or word in _JOINING:
            letters.add(capital)
    return letters


def _words(text: str) -> str:
    """Lower-case words without articles, padded so that a search matches whole words."""
    kept = [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in {"a", "an", "the"}]
    return f" {' '.join(kept)} "


def _explicit(text: str) -> set[str]:
    """The letters after ``answer``, ``answer is`` or ``answer:``.

    Not the article of ``answer is a red ball``: a lower-case letter followed by a word.
    """
    found = set()
    for match in _EXPLICIT.finditer(text):
        letter = match.group(1)
        article = (letter.islower() and not match.group(0).endswith(")")
                   and re.match(r"\s+[a-z]", text[match.end():]))
        if not article:
            found.add(letter.upper())
    return found


def _by_words(text: str, choices: Sequence[tuple[str, str]]) -> str | None:
    said = _words(text)
    fits = [(letter, _words(words)) for letter, words in choices
            if _words(words).strip() and _words(words) in said]
    # "to your left" inside "further to your left": the longer choice is the one meant
    fits = [(letter, words) for letter, words in fits
            if not any(words != other and words in other for _, other in fits)]
    return fits[0][0] if len(fits) == 1 else None


def read_answer(text: str, choices: Sequence[tuple[str, str]]) -> str | None:
    """The letter of the choice ``text`` names, or None if it names none or several.

    Args:
        text: the model's reply.
        choices: the question's ``(letter, text)`` pairs.
    """
    letters = {letter for letter, _ in choices}
    explicit = _explicit(text)
    if explicit:
        return explicit.pop() if len(explicit) == 1 and explicit <= letters else None
    alone = _ALONE.match(text)
    if alone:
        letter = alone.group(1).upper()
        return letter if letter in letters else None
    named = _mentions(text)
    if named:
        return named.pop() if len(named) == 1 and named <= letters else None
    return _by_words(text, choices)
