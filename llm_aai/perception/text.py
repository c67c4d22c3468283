"""The text observation: what the agent sees, in words, from one of two perspectives.

Input is the simulator's view of its state (``llm_aai.sim.sight``): the objects the eye's
rays reach, nearest first. Egocentric text gives each one's distance and its bearing left or
right of straight ahead; allocentric text gives arena coordinates and the agent's own pose
and heading instead (the two frames of reference of text-only spatial benchmarks, called
perspectives here so that "frame" keeps its one meaning, a camera image). The text is
deterministic: the same state always reads the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from llm_aai.arena.objects import Kind
from llm_aai.arena.placement import PlacedObject
from llm_aai.perception.words import degrees_side, heading, metres, object_noun
from llm_aai.sim.sight import Eye, Sighting

Perspective = Literal["egocentric", "allocentric"]
PERSPECTIVES: tuple[str, ...] = ("egocentric", "allocentric")
NOTHING = "You see nothing: everything is dark."
EMPTY = "You see no objects, only the floor and the fence."
_WIDE = 10.0
"""Objects spanning more than this many degrees get their edges and nearest part."""
_RAISED = 0.3
"""A ball whose bottom is this high above the floor is said to be raised."""


def size_phrase(sighting_kind: Kind, size: tuple[float, float, float]) -> str:
    """An object's size in the words its shape calls for."""
    x, y, z = size
    if sighting_kind is Kind.GOAL:
        return f"{metres(x)} m across"
    if sighting_kind is Kind.ZONE:
        return f"{metres(x)} m by {metres(z)} m on the floor"
    if sighting_kind is Kind.TUNNEL:
        return f"{metres(x)} m wide, {metres(y)} m tall, {metres(z)} m long"
    return f"{metres(x)} m wide, {metres(y)} m tall, {metres(z)} m deep"


def _noun(sighting: Sighting) -> str:
    obj = sighting.obj
    return f"{object_noun(obj.spec, obj.color)} ({size_phrase(obj.spec.kind, obj.size)})"


def _raised(sighting: Sighting) -> float | None:
    """How far a ball's bottom is above the floor, if that is worth saying."""
    if sighting.obj.spec.kind is not Kind.GOAL:
        return None
    bottom = sighting.centre[1] - sighting.obj.size[0] / 2
    return bottom if bottom > _RAISED else None


def _listed(parts: list[str]) -> str:
    article = "an" if parts[0][0] in "aeiou" else "a"
    return f"- {article} " + ", ".join(parts)


def egocentric_line(sighting: Sighting) -> str:
    """One object relative to the agent: distance, bearing, and more when it matters."""
    parts = [_noun(sighting), f"{metres(sighting.distance)} m away",
             degrees_side(sighting.bearing)]
    if sighting.rightmost - sighting.leftmost > _WIDE:
        parts.append(f"nearest part {metres(sighting.nearest)} m away, seen from "
                     f"{degrees_side(sighting.leftmost)} to {degrees_side(sighting.rightmost)}")
    raised = _raised(sighting)
    if raised is not None:
        side = "above" if sighting.elevation >= 0 else "below"
        parts.append(f"raised {metres(raised)} m off the floor, {round(abs(sighting.elevation))}° "
                     f"{side} eye level")
    if sighting.behind_glass:
        parts.append("seen through glass")
    return _listed(parts)


def allocentric_line(sighting: Sighting) -> str:
    """One seen object in arena coordinates: centre, rotation, height above the floor."""
    return placed_line(sighting.obj, sighting.centre, behind_glass=sighting.behind_glass)


def placed_line(obj: PlacedObject, centre: tuple[float, float, float], *,
                behind_glass: bool = False) -> str:
    """One object in arena coordinates (the allocentric text and the plan's map)."""
    x, y, z = centre
    parts = [f"{object_noun(obj.spec, obj.color)} ({size_phrase(obj.spec.kind, obj.size)})",
             f"centre at x {metres(x)}, z {metres(z)}"]
    if obj.spec.kind is not Kind.GOAL and round(obj.yaw) % 360:
        parts.append(f"rotated {heading(obj.yaw)}")
    if obj.spec.kind is Kind.GOAL and y - obj.size[0] / 2 > _RAISED:
        parts.append(f"raised {metres(y - obj.size[0] / 2)} m off the floor")
    if behind_glass:
        parts.append("seen through glass")
    return _listed(parts)


def pose_line(eye: Eye) -> str:
    """The agent's own position and heading, for the allocentric perspective."""
    x, _, z = eye.position
    return (f"You are at x {metres(x)}, z {metres(z)}, facing {heading(eye.yaw)} "
            "(arena coordinates in metres, x from 0 to 40 left to right, z from 0 to 40 "
            "bottom to top; headings clockwise from +z).")


def describe(sightings: Sequence[Sighting], eye: Eye, *, perspective: Perspective = "egocentric",
             dark: bool = False) -> str:
    """What the agent sees, as text (without the health line, which the prompt adds).

    Args:
        sightings: the objects in view, nearest first.
        eye: where the agent stands and looks (used by the allocentric perspective).
        perspective: ``"egocentric"`` (distance and bearing) or ``"allocentric"``
            (coordinates).
        dark: the lights are off (a blackout): nothing is seen, as the image is black.

    Raises:
        ValueError: an unknown perspective.
    """
    if perspective not in PERSPECTIVES:
        raise ValueError(f"perspective must be one of {PERSPECTIVES}, got {perspective!r}")
    if dark:
        return NOTHING
    lines = [pose_line(eye)] if perspective == "allocentric" else []
    if not sightings:
        lines.append(EMPTY)
        return "\n".join(lines)
    line = egocentric_line if perspective == "egocentric" else allocentric_line
    lines.append("You see:")
    lines += [line(s) for s in sightings]
    return "\n".join(lines)
