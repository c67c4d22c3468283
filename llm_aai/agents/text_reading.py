"""Reading an egocentric text observation back into objects, for the built-in agents.

The inverse of ``llm_aai.perception.text``'s egocentric lines: what a hand-written policy
needs to act on words instead of pixels (the heuristic's text mode). Lines it cannot read
are refused, so a change of wording breaks the tests, not the agent's play in silence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from llm_aai.perception.text import EMPTY, NOTHING

_BEARING = r"straight ahead|\d+° (?:left|right)"
_LINE = re.compile(
    rf"^- an? (?P<noun>[^(]+?) \((?P<size>[^)]*)\), (?P<distance>[\d.]+) m away, "
    rf"(?P<bearing>{_BEARING})(?P<rest>.*)$")
_EDGES = re.compile(rf"nearest part (?P<nearest>[\d.]+) m away, seen from (?P<left>{_BEARING}) "
                    rf"to (?P<right>{_BEARING})")
_FIRST_NUMBER = re.compile(r"[\d.]+")


@dataclass(frozen=True)
class SeenObject:
    """One object of a text observation.

    Attributes:
        noun: its name as worded (``"yellow ball"``, ``"red death zone"``, ``"blue wall"``).
        size: its first size figure in metres (a ball's diameter, a zone's or wall's width).
        distance / bearing: to its centre (bearing degrees, positive right).
        nearest / leftmost / rightmost: for wide objects, the nearest part and the edges;
            otherwise the centre's distance and bearing.
        through_glass: seen through a transparent wall.
    """

    noun: str
    size: float
    distance: float
    bearing: float
    nearest: float
    leftmost: float
    rightmost: float
    through_glass: bool


@dataclass(frozen=True)
class View:
    """A text observation read back: darkness, and the objects in the order listed."""

    dark: bool
    objects: tuple[SeenObject, ...]


def _bearing(text: str) -> float:
    if text == "straight ahead":
        return 0.0
    value, side = text.split("° ")
    return float(value) * (1 if side == "right" else -1)


def read_view(text: str) -> View:
    """The view in a message's text (egocentric frame; other lines are ignored).

    Raises:
        ValueError: the text holds no view, or an object line that does not parse.
    """
    lines = text.splitlines()
    if NOTHING in lines:
        return View(True, ())
    if EMPTY in lines:
        return View(False, ())
    if "You see:" not in lines:
        raise ValueError(f"no egocentric text observation in the message: {text[:200]!r}")
    objects = []
    for line in lines[lines.index("You see:") + 1:]:
        if not line.startswith("- "):
            break
        match = _LINE.match(line)
        if match is None:
            raise ValueError(f"cannot read the object line {line!r}")
        distance, bearing = float(match["distance"]), _bearing(match["bearing"])
        edges = _EDGES.search(match["rest"])
        objects.append(SeenObject(
            noun=match["noun"], size=float(_FIRST_NUMBER.search(match["size"]).group()),
            distance=distance, bearing=bearing,
            nearest=float(edges["nearest"]) if edges else distance,
            leftmost=_bearing(edges["left"]) if edges else bearing,
            rightmost=_bearing(edges["right"]) if edges else bearing,
            through_glass="seen through glass" in match["rest"],
        ))
    return View(False, tuple(objects))
