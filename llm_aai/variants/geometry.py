"""Where an arena's fixed objects stand, and the gaps between them that a variant must keep.

A transformation keeps a task's logic if every gap the agent could or could not squeeze
through stays that way. This module reads an arena's *fixed* objects (position, size and
rotation all given, none drawn at random), draws their footprints seen from above with
shapely, and sorts every gap (object to object, object to each side of the fence) into bands
that decide passability for the agent, a ball 1 m across (docs/animal-ai-facts.md §4):
touching, too narrow, marginal (within a few centimetres of the agent's width) and open.
``gap_bands`` is what jitter and translation compare before and after they move anything.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np
import shapely
from shapely.geometry import Point, Polygon

from llm_aai.arena.errors import PlacementError
from llm_aai.arena.geometry import ARENA_SIZE, Box, Sphere
from llm_aai.arena.model import Arena
from llm_aai.arena.objects import Kind, lookup
from llm_aai.arena.placement import PlacedObject, collision_shapes, place_arena

AGENT_WIDTH = 1.0
"""The agent's diameter (m): a gap narrower than this cannot be walked through."""
TOUCH = 0.05
"""Gaps below this (m) are contacts: objects resting on or against each other."""
MARGIN = 0.05
"""Gaps within this (m) of the agent's width are marginal: kept marginal."""


class NotApplicable(ValueError):
    """A transformation cannot apply to this arena without changing its task (the reason)."""


@dataclass(frozen=True)
class FixedObject:
    """One fixed object instance seen from above.

    Attributes:
        item_index / instance_index: where in the YAML it comes from.
        kind: the object family.
        name: the object type (AAI 3 name).
        shape: its footprint (union of its colliders' outlines).
    """

    item_index: int
    instance_index: int
    kind: Kind
    name: str
    shape: Polygon


def is_fixed_instance(arena: Arena, item_index: int, instance: int) -> bool:
    """Whether an instance's position, rotation and size are all given (nothing random)."""
    item = arena.items[item_index]
    if instance >= len(item.positions):
        return False
    position = item.positions[instance]
    if position.x < 0 or position.z < 0:
        return False
    spec = lookup(item.name)
    if spec.kind not in (Kind.GOAL, Kind.AGENT):
        if instance >= len(item.rotations) or item.rotations[instance] < 0:
            return False
    if spec.kind is Kind.AGENT:
        return True
    if instance >= len(item.sizes):
        return False
    size = item.sizes[instance]
    axes = (size.x,) if spec.kind is Kind.GOAL else size.as_tuple()
    return all(value >= 0 for value in axes)


def _outline(obj: PlacedObject) -> Polygon:
    parts = []
    for shape in collision_shapes(obj):
        if isinstance(shape, Sphere):
            parts.append(Point(shape.center[0], shape.center[2]).buffer(shape.radius, 16))
            continue
        # boxes, ramps' wedges and tunnels' arches: their bounding rectangle seen from above
        (ax, az), (bx, bz) = Box(shape.center, shape.half, shape.yaw).axes()
        hx, _, hz = shape.half
        cx, _, cz = shape.center
        corners = [(cx + sx * hx * ax + sz * hz * bx, cz + sx * hx * az + sz * hz * bz)
                   for sx, sz in ((-1, -1), (1, -1), (1, 1), (-1, 1))]
        parts.append(Polygon(corners))
    return shapely.union_all(parts) if len(parts) > 1 else parts[0]


def fixed_objects(arena: Arena) -> list[FixedObject]:
    """The arena's fixed instances with their footprints (the agent's too, when it is fixed).

    Placement with any seed puts a fixed instance at the same spot (it draws nothing), so a
    placement with seed 0 gives their geometry; instances it drops are left out.

    Raises:
        NotApplicable: the agent finds no spot (a transformation put it inside something).
    """
    try:
        placed = place_arena(arena, np.random.default_rng(0))
    except PlacementError as error:
        raise NotApplicable(f"the agent has no room: {error}") from error
    found = []
    for obj in (placed.agent, *placed.objects):
        if obj.item_index < 0 or not is_fixed_instance(arena, obj.item_index,
                                                       obj.instance_index):
            continue
        found.append(FixedObject(obj.item_index, obj.instance_index, obj.spec.kind,
                                 obj.spec.name, _outline(obj)))
    return found


def band(gap: float) -> str:
    """The passability band of a gap (m): touching, narrow, marginal or open."""
    if gap < TOUCH:
        return "touching"
    if gap < AGENT_WIDTH - MARGIN:
        return "narrow"
    if gap <= AGENT_WIDTH + MARGIN:
        return "marginal"
    return "open"


def fence_gaps(shape: Polygon) -> tuple[float, float, float, float]:
    """Distances (m) from a footprint to the fence's four sides: x=0, x=40, z=0, z=40."""
    min_x, min_z, max_x, max_z = shape.bounds
    return (min_x, ARENA_SIZE - max_x, min_z, ARENA_SIZE - max_z)


def gap_bands(footprints: list[FixedObject]) -> dict[tuple, str]:
    """The band of every gap: each pair of footprints and each footprint to each fence side.

    Keys are ``((item, instance), (item, instance))`` for pairs and ``((item, instance),
    side)`` for the fence (side 0-3 as in ``fence_gaps``), so two layouts of the same objects
    can be compared key by key.
    """
    bands: dict[tuple, str] = {}
    for print_ in footprints:
        key = (print_.item_index, print_.instance_index)
        for side, gap in enumerate(fence_gaps(print_.shape)):
            bands[(key, side)] = band(gap)
    for one, two in combinations(footprints, 2):
        gap = one.shape.distance(two.shape)
        bands[((one.item_index, one.instance_index), (two.item_index, two.instance_index))] = \
            band(gap)
    return bands


def changed_gaps(before: dict[tuple, str], after: dict[tuple, str]) -> list[tuple]:
    """The gaps whose band differs (an object missing from ``after`` counts as changed)."""
    return [key for key, value in before.items() if after.get(key) != value]
