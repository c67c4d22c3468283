"""Reading a text observation back into objects, for the built-in agents.

The inverse of ``llm_aai.perception.text``'s lines: what a hand-written policy needs to act
on words instead of pixels (the heuristic's text mode). An allocentric view (arena
coordinates and the agent's pose) is turned into distances and bearings from that pose, so
the same policy plays both frames of reference; the plan probe's map is read likewise. Lines
it cannot read are refused, so a change of wording breaks the tests, not the agent's play in
silence.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from llm_aai.perception.arena_map import NO_OBJECTS, OBJECTS_HEADER
from llm_aai.perception.text import EMPTY, NOTHING

_BEARING = r"straight ahead|\d+° (?:left|right)"
_LINE = re.compile(
    rf"^- an? (?P<noun>[^(]+?) \((?P<size>[^)]*)\), (?P<distance>[\d.]+) m away, "
    rf"(?P<bearing>{_BEARING})(?P<rest>.*)$")
_EDGES = re.compile(rf"nearest part (?P<nearest>[\d.]+) m away, seen from (?P<left>{_BEARING}) "
                    rf"to (?P<right>{_BEARING})")
_FIRST_NUMBER = re.compile(r"[\d.]+")
_POSE = re.compile(r"^You are at x (?P<x>[\d.-]+), z (?P<z>[\d.-]+), facing (?P<yaw>\d+)°")
_PLACED = re.compile(r"^- an? (?P<noun>[^(]+?) \((?P<size>[^)]*)\), centre at x (?P<x>[\d.-]+), "
                     r"z (?P<z>[\d.-]+)(?P<rest>.*)$")


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
    """The view in a message's text, in either frame, or the plan probe's map.

    The map reads as a view of every object from the agent's pose; other lines are ignored.

    Raises:
        ValueError: the text holds no view, or an object line that does not parse.
    """
    lines = text.splitlines()
    if NOTHING in lines:
        return View(True, ())
    if EMPTY in lines or NO_OBJECTS in lines:
        return View(False, ())
    header = next((h for h in ("You see:", OBJECTS_HEADER) if h in lines), None)
    if header is None:
        raise ValueError(f"no text observation or map in the message: {text[:200]!r}")
    pose = next((m for m in map(_POSE.match, lines) if m is not None), None)
    objects = []
    for line in lines[lines.index(header) + 1:]:
        if not line.startswith("- "):
            break
        seen = _egocentric(line) if pose is None else _allocentric(line, pose)
        if seen is None:
            raise ValueError(f"cannot read the object line {line!r}")
        objects.append(seen)
    return View(False, tuple(objects))


def _egocentric(line: str) -> SeenObject | None:
    match = _LINE.match(line)
    if match is None:
        return None
    distance, bearing = float(match["distance"]), _bearing(match["bearing"])
    edges = _EDGES.search(match["rest"])
    return SeenObject(
        noun=match["noun"], size=float(_FIRST_NUMBER.search(match["size"]).group()),
        distance=distance, bearing=bearing,
        nearest=float(edges["nearest"]) if edges else distance,
        leftmost=_bearing(edges["left"]) if edges else bearing,
        rightmost=_bearing(edges["right"]) if edges else bearing,
        through_glass="seen through glass" in match["rest"],
    )


def _allocentric(line: str, pose: re.Match) -> SeenObject | None:
    """An object in arena coordinates as seen from ``pose``.

    Its centre's distance and bearing from the pose; its edges and nearest part estimated
    from its first size figure (a width or a diameter).
    """
    match = _PLACED.match(line)
    if match is None:
        return None
    dx, dz = float(match["x"]) - float(pose["x"]), float(match["z"]) - float(pose["z"])
    yaw = math.radians(float(pose["yaw"]))
    forward = dx * math.sin(yaw) + dz * math.cos(yaw)
    right = dx * math.cos(yaw) - dz * math.sin(yaw)
    distance, bearing = math.hypot(dx, dz), math.degrees(math.atan2(right, forward))
    size = float(_FIRST_NUMBER.search(match["size"]).group())
    half = math.degrees(math.atan2(size / 2, max(distance, 0.1)))
    return SeenObject(noun=match["noun"], size=size, distance=distance, bearing=bearing,
                      nearest=max(distance - size / 2, 0.1), leftmost=bearing - half,
                      rightmost=bearing + half, through_glass="seen through glass" in match["rest"])
