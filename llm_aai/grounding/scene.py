"""What the simulator knew at the instant a Think was written: every object, seen or not.

A ``Scene`` is taken by ``probe`` from the embedded backend while ``llm_aai.replay`` re-simulates
the logged episode (``resimulate(..., probe=probe)``), at the instant the turn's observation was
taken. Visibility is the text observation's own (``backend.look()``, ``llm_aai.sim.sight``: rays
through the eye's pixels, glass seen through, brick walls not), so a claim is judged by exactly
what the agent could have seen; the objects it could not see come from ``backend.layout()``
with their bearing and distance computed the same way, so a claim about where an unseen object
lies can still be checked.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from llm_aai.arena.objects import Kind
from llm_aai.perception.words import colour_name, degrees_side, metres, object_noun

HALF_FIELD_DEG = 50.0
"""Half the eye's 100 degree field of view: an unseen object within it is hidden, not out of
view."""

_TYPES = {Kind.WALL: "wall", Kind.RAMP: "ramp", Kind.TUNNEL: "tunnel", Kind.BOX: "box",
          Kind.U_BLOCK: "box", Kind.ZONE: "zone", Kind.GOAL: "ball"}
"""The claim vocabulary's object types: a pushable U/L/J block counts as a box."""

WALL_RATIO = 3.0
"""A ``Wall`` item is a wall when its longer side on the ground is at least this many times its
shorter one (and it is not small); otherwise it is shaped like a block."""
SMALL_M = 1.5
"""A ``Wall`` item no side of which is longer than this (metres) is a block, however thin."""


@dataclass(frozen=True)
class SceneObject:
    """One object of the arena at the instant of an observation, in the agent's frame.

    Attributes:
        noun: the text observation's words for it (``green ball``, ``grey wall``, ...), but
            a block-shaped ``Wall`` item is a block (``grey block``), as a person says.
        type: ``ball``, ``wall``, ``ramp``, ``tunnel``, ``box`` or ``zone``, by shape: a
            ``Wall`` item shaped like a block or cube is a ``box`` (``block_shaped``).
        colour: a ball's or zone's colour (``green``, ``yellow``, ``red``, ``orange``); a
            wall's, ramp's or tunnel's palette colour, or ``transparent``.
        bearing: degrees from straight ahead, positive to the right, in (-180, 180].
        distance: metres on the ground from the eye to its centre.
        visible: some ray of the eye reaches it (directly or through glass).
        leftmost / rightmost: bearings of its seen part's edges (its centre's when unseen).
        also: other types a claim may call it by: a block-shaped ``Wall`` item is also a
            ``wall``, the item's name and the text observation's word for it.
    """

    noun: str
    type: str
    colour: str
    bearing: float
    distance: float
    visible: bool
    leftmost: float
    rightmost: float
    also: tuple[str, ...] = ()

    @property
    def where(self) -> str:
        """``visible``, ``hidden`` (in view, behind something opaque) or ``out of view``."""
        if self.visible:
            return "visible"
        return "hidden" if abs(self.bearing) <= HALF_FIELD_DEG else "out of view"

    def describe(self) -> str:
        """E.g. ``red ball at +32 deg, 7.2 m, visible``."""
        return f"{self.noun} at {self.bearing:+.0f} deg, {self.distance:.1f} m, {self.where}"

    def spoken(self) -> str:
        """The text observation's wording of its place (``7.5 m away, 12° right``)."""
        return f"{metres(self.distance)} m away, {degrees_side(self.bearing)}"


@dataclass(frozen=True)
class Scene:
    """Every object of the arena (collected yellow balls left out) and whether it was dark."""

    objects: tuple[SceneObject, ...]
    dark: bool = False

    @property
    def visible(self) -> tuple[SceneObject, ...]:
        """The objects the eye could see (none in the dark)."""
        return () if self.dark else tuple(o for o in self.objects if o.visible)


def probe(backend: Any) -> Scene:
    """The scene now, from an embedded backend's ``look`` and ``layout``.

    Raises:
        TypeError: the backend cannot say what its eye sees (only the embedded one can).
    """
    look = getattr(backend, "look", None)
    layout = getattr(backend, "layout", None)
    if look is None or layout is None:
        raise TypeError(f"{type(backend).__name__} cannot say what the agent sees; grounding "
                        "needs the embedded simulator")
    eye, sightings, dark = look()
    _, placed, centres = layout()
    seen = {id(s.obj): s for s in sightings}
    objects = []
    for obj, centre in zip(placed, centres, strict=True):
        sighting = seen.get(id(obj))
        if sighting is not None:
            bearing, distance = sighting.bearing, sighting.distance
            left, right = sighting.leftmost, sighting.rightmost
        else:
            dx, dz = centre[0] - eye.position[0], centre[2] - eye.position[2]
            bearing = (math.degrees(math.atan2(dx, dz)) - eye.yaw + 180.0) % 360.0 - 180.0
            distance = math.hypot(dx, dz)
            left = right = bearing
        noun, kind, also = _named(obj)
        objects.append(SceneObject(
            noun=noun, type=kind, colour=_colour(obj), bearing=bearing, distance=distance,
            visible=sighting is not None, leftmost=left, rightmost=right, also=also))
    return Scene(tuple(objects), bool(dark))


def block_shaped(size: tuple[float, float, float]) -> bool:
    """Whether a ``Wall`` item of this size (x, y, z in metres) is a block rather than a wall.

    The testbed builds walls, platforms, pillars and cubes all from ``Wall`` items; a person
    calls a 1.5 m cube a block, and only a long, thin one a wall.
    """
    across, along = sorted((size[0], size[2]))
    return max(size) <= SMALL_M or along < WALL_RATIO * across


def _named(obj) -> tuple[str, str, tuple[str, ...]]:
    """An object's noun, claim type and other types, from its kind and, for walls, its shape."""
    noun = object_noun(obj.spec, obj.color)
    if obj.spec.kind is Kind.WALL and block_shaped(obj.size):
        return noun.removesuffix("wall") + "block", "box", ("wall",)
    return noun, _TYPES.get(obj.spec.kind, "object"), ()


def _colour(obj) -> str:
    """A ball's or zone's colour is its name's; other objects' are drawn, or glass."""
    noun = object_noun(obj.spec, obj.color)
    if obj.spec.kind in (Kind.GOAL, Kind.ZONE):
        return noun.split()[0]
    if obj.spec.alpha < 1:
        return "transparent"
    return colour_name(obj.color)
