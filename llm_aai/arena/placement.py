"""Resolve an arena's random values into concrete objects, as AAI's ArenaBuilder does.

This module defines the placer's output types. ``place_arena`` turns an ``Arena`` (with AAI's
``-1``/missing "random" markers) into a ``PlacedArena`` of concrete positions, sizes, yaws and
colours, using only the RNG it is given, so the same seed always builds the same world.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from llm_aai.arena.errors import PlacementError
from llm_aai.arena.geometry import (
    ARENA_SIZE,
    Arch,
    Box,
    Shape,
    Sphere,
    Wedge,
    crosses_fence,
    overlaps,
)
from llm_aai.arena.model import RANDOM, RGB, Arena, Item, Vector3
from llm_aai.arena.objects import Kind, ObjectSpec, lookup
from llm_aai.arena.timings import GoalTimings, timings_of


@dataclass(frozen=True)
class PlacedObject:
    """One concrete object, in world coordinates the simulator can build directly.

    Attributes:
        spec: the object type.
        position: (x, y, z) of the centre of the object's *bottom* face; y already includes
            AAI's +0.01 lift (zones: their fixed slab, see the placer).
        size: world extents (x, y, z) in metres after AAI's clamp and 0.999 factor. For balls
            all three equal the diameter.
        yaw: degrees, clockwise seen from above (Unity), prefab offset already added.
        color: RGB in 0-1 after AAI's colour rules (random draws resolved).
        item_index / instance_index: where in the YAML this object came from.
        timings: a changing goal's initial and final values, rate and delay (else None).

    """

    spec: ObjectSpec
    position: tuple[float, float, float]
    size: tuple[float, float, float]
    yaw: float
    color: tuple[float, float, float]
    item_index: int
    instance_index: int
    timings: GoalTimings | None = None


@dataclass(frozen=True)
class PlacedArena:
    """An arena with every random choice made.

    Attributes:
        arena: the configuration it was built from (time limit, pass mark, blackouts).
        agent: the agent's placement (position = bottom of the sphere, size 1).
        objects: every other object in spawn order.
        dropped: human-readable notes on instances AAI would silently drop because no free
            spot was found; kept so that nothing disappears without a trace.

    """

    arena: Arena
    agent: PlacedObject
    objects: tuple[PlacedObject, ...]
    dropped: tuple[str, ...] = ()


MAX_ATTEMPTS = 20
"""Spawn attempts per object instance before AAI gives up and drops it."""
MAX_AGENT_ATTEMPTS = 100
"""Spawn attempts for the agent; failing them all makes the arena unplayable."""
SIZE_FACTOR = 0.999
"""AAI shrinks every object by this factor so that objects laid edge to edge do not collide."""
LIFT = 0.01
"""AAI spawns objects with their bottom this far above the requested y."""
ZONE_CENTER_Y = -0.15
"""Zones ignore the YAML y: their slab is always centred here (``DeathZone.cs``)."""

_RANDOM_POSITION = Vector3(-1.0, -1.0, -1.0)
_RANDOM_SIZE = Vector3(-1.0, -1.0, -1.0)


def place_arena(
    arena: Arena, rng: np.random.Generator, *, source: str | None = None
) -> PlacedArena:
    """Resolve every random value of ``arena`` and place its objects as AAI's ArenaBuilder does.

    The agent goes first when the YAML lists it, otherwise last at a random spot. Each other
    instance gets up to 20 attempts (the agent 100); every attempt re-draws the random parts
    and keeps the first spot where the object overlaps nothing it may not overlap. Instances
    that find no spot are dropped, as in AAI, but named in ``PlacedArena.dropped``. An agent
    not listed in the YAML gets ``item_index`` -1. U/L/J shapes keep their YAML size (clamped,
    x0.999) in ``PlacedObject.size``; ``collision_shapes`` shows how it maps to pieces.

    Args:
        arena: the parsed arena.
        rng: the only source of randomness, so a seed fixes the whole world.
        source: name used in errors and notes; defaults to the arena's file.

    Returns:
        The placed arena.

    Raises:
        PlacementError: the agent found no free spot in 100 attempts.

    """
    where = source or (arena.location.file if arena.location else "<arena>")
    placed: list[PlacedObject] = []
    shapes: list[tuple[Shape, bool]] = []  # (collider, is_trigger)
    dropped: list[str] = []
    agent_index = next((i for i, item in enumerate(arena.items) if item.name == "Agent"), None)

    def place_agent() -> PlacedObject:
        item = arena.items[agent_index] if agent_index is not None else Item("Agent")
        request = _Request(lookup("Agent"), item, agent_index if agent_index is not None else -1, 0)
        agent = _place_one(request, rng, shapes, MAX_AGENT_ATTEMPTS)
        if agent is None:
            raise PlacementError(
                where, f"no free spot for the agent at {_describe_position(item, 0)} after "
                f"{MAX_AGENT_ATTEMPTS} attempts (it may not overlap any object or zone)")
        shapes.extend((shape, False) for shape in collision_shapes(agent))
        if item.instance_count > 1:
            dropped.append(f"{where}: item {request.item_index} (Agent): only the first of "
                           f"{item.instance_count} agent instances is used")
        return agent

    agent = place_agent() if agent_index is not None else None
    for item_index, item in enumerate(arena.items):
        if item_index == agent_index:
            continue
        try:
            spec = lookup(item.name)
        except KeyError:
            dropped.append(f"{where}: item {item_index} ({item.name}): unknown object, skipped "
                           "(AAI skips unknown names too)")
            continue
        if spec.kind is Kind.AGENT:  # a second Agent item: AAI has one agent only
            dropped.append(f"{where}: item {item_index} (Agent): a second Agent item is ignored")
            continue
        for k in range(item.instance_count):
            obj = _place_one(_Request(spec, item, item_index, k), rng, shapes, MAX_ATTEMPTS)
            if obj is None:
                dropped.append(f"{where}: item {item_index} ({item.name}) instance {k} at "
                               f"{_describe_position(item, k)}: no free spot after "
                               f"{MAX_ATTEMPTS} attempts, dropped as AAI does")
                continue
            placed.append(obj)
            trigger = spec.kind is Kind.ZONE
            shapes.extend((shape, trigger) for shape in collision_shapes(obj))
    if agent is None:
        agent = place_agent()
    return PlacedArena(arena=arena, agent=agent, objects=tuple(placed), dropped=tuple(dropped))


def spawn_box(obj: PlacedObject) -> Box:
    """Return the box AAI tests for overlap when spawning ``obj``: its first collider.

    Balls test their bounding cube; U/L shapes test only their spine (AAI reads the bounds of
    the first collider only, a quirk that lets their arms spawn into other objects).
    """
    x, bottom, z = obj.position
    sx, sy, sz = obj.size
    center = (x, bottom + sy / 2, z)
    if obj.spec.kind is Kind.U_BLOCK:
        return Box(center, (0.15 * sx, sy / 2, sz / 2), obj.yaw)
    if obj.spec.kind is Kind.TUNNEL:  # a half-pipe: its height is half its YAML y
        return Box((x, bottom + sy / 4, z), (sx / 2, sy / 4, sz / 2), obj.yaw)
    return Box(center, (sx / 2, sy / 2, sz / 2), obj.yaw)


def collision_shapes(obj: PlacedObject) -> list[Shape]:
    """Every collider of a placed object, as later spawns see it.

    Balls and the agent are spheres. U/L/J shapes are a spine along their local z plus arms
    reaching toward local +x (J: -x) at both ends (L/J: the -z end only); sizes follow the
    prefab's piece layout scaled by (0.3 x, y, 0.1 z), see docs/animal-ai-facts.md §4. Ramps are
    wedges (tall end on local -z), tunnels half-pipe arches of width x, height y/2 and length
    z whose hollow is free (AAI's mesh collider lets goals spawn inside). Everything else
    (walls, boxes, zones) is its box.
    """
    x, bottom, z = obj.position
    sx, sy, sz = obj.size
    kind = obj.spec.kind
    if kind in (Kind.GOAL, Kind.AGENT):
        return [Sphere((x, bottom + sy / 2, z), sy / 2)]
    spine = spawn_box(obj)
    if kind is Kind.RAMP:
        return [Wedge(spine.center, spine.half, spine.yaw)]
    if kind is Kind.TUNNEL:
        return [Arch(spine.center, spine.half, spine.yaw)]
    if kind is not Kind.U_BLOCK:
        return [spine]
    arm_x = -0.3 * sx if obj.spec.name == "LObject2" else 0.3 * sx
    ends = (-0.55 * sz,) if obj.spec.name in ("LObject", "LObject2") else (-0.55 * sz, 0.55 * sz)
    (ax, az), (bx, bz) = spine.axes()
    arms: list[Shape] = []
    for end in ends:
        center = (x + arm_x * ax + end * bx, spine.center[1], z + arm_x * az + end * bz)
        arms.append(Box(center, (0.45 * sx, sy / 2, 0.05 * sz), obj.yaw))
    return [spine, *arms]


@dataclass(frozen=True)
class _Request:
    """One instance to spawn: the spec and the YAML entries that drive it."""

    spec: ObjectSpec
    item: Item
    item_index: int
    instance: int

    def entry(self, values: tuple, default):
        return values[self.instance] if self.instance < len(values) else default


def _place_one(request: _Request, rng: np.random.Generator,
               shapes: list[tuple[Shape, bool]], attempts: int) -> PlacedObject | None:
    spec = request.spec
    position = request.entry(request.item.positions, _RANDOM_POSITION)
    rotation = request.entry(request.item.rotations, RANDOM)
    size = request.entry(request.item.sizes, _RANDOM_SIZE)
    color = _resolve_color(spec, request.entry(request.item.colors, None), rng)
    for _ in range(attempts):
        candidate = _candidate(spec, position, rotation, size, color, request, rng)
        if _is_free(spec, spawn_box(candidate), shapes):
            return candidate
    return None


def _candidate(spec: ObjectSpec, position: Vector3, rotation: float, size: Vector3,
               color: tuple[float, float, float], request: _Request,
               rng: np.random.Generator) -> PlacedObject:
    timings = (timings_of(request.item, request.instance, spec.name)
               if spec.change is not None else None)
    if timings is not None:  # DecayGoal.cs: the diameter is the initial value, clamped to 0-5
        d = min(max(timings.initial, spec.size_min[0]), spec.size_max[0]) * SIZE_FACTOR
        extents = (d, d, d)
    else:
        extents = _resolve_size(spec, size, rng)
    yaw = (rng.uniform(*spec.rotation_range) if rotation < 0 else rotation) + spec.yaw_offset
    probe = PlacedObject(spec, (0.0, 0.0, 0.0), extents, yaw, color, request.item_index,
                         request.instance, timings)
    half_x, half_z = spawn_box(probe).footprint_half()
    x = _coordinate(position.x, half_x, rng)
    z = _coordinate(position.z, half_z, rng)
    if spec.kind is Kind.ZONE:
        bottom = ZONE_CENTER_Y - extents[1] / 2
    else:
        bottom = max(position.y, 0.0) + LIFT
    return dataclasses.replace(probe, position=(x, bottom, z))


def _resolve_size(spec: ObjectSpec, size: Vector3, rng: np.random.Generator):
    if spec.kind is Kind.AGENT:
        return (1.0, 1.0, 1.0)
    lows, highs = spec.size_min, spec.size_max
    if spec.kind is Kind.GOAL:  # a ball: only x counts, it is the diameter
        d = _axis(size.x, lows[0], highs[0], rng) * SIZE_FACTOR
        return (d, d, d)
    return tuple(_axis(v, lo, hi, rng) * SIZE_FACTOR
                 for v, lo, hi in zip(size.as_tuple(), lows, highs, strict=True))


def _axis(value: float, low: float, high: float, rng: np.random.Generator) -> float:
    if value < 0:
        return float(rng.uniform(low, high))
    return min(max(value, low), high)


def _coordinate(value: float, half: float, rng: np.random.Generator) -> float:
    if value < 0:
        half = min(half, ARENA_SIZE / 2)
        return float(rng.uniform(half, ARENA_SIZE - half))
    return min(max(value, 0.0), ARENA_SIZE)


def _resolve_color(spec: ObjectSpec, color: RGB | None,
                   rng: np.random.Generator) -> tuple[float, float, float]:
    """AAI 3.x colour rules: only walls, ramps and tunnels honour (or randomise) colours."""
    if not spec.color_settable:
        return spec.color
    if color is None:
        return tuple(float(v) for v in rng.uniform(0.0, 1.0, size=3))
    return tuple(float(rng.uniform(0.0, 1.0)) if c < 0 else min(c / 255.0, 1.0)
                 for c in color.as_tuple())


def _is_free(spec: ObjectSpec, box: Box, shapes: list[tuple[Shape, bool]]) -> bool:
    """AAI's notion of a free spot (docs/animal-ai-facts.md §6).

    Zones may overlap anything but the outer walls; ordinary objects may overlap zones (their
    colliders are triggers); the agent may overlap nothing at all.
    """
    if crosses_fence(box):
        return False
    if spec.kind is Kind.ZONE:
        return True
    agent = spec.kind is Kind.AGENT
    return not any(overlaps(box, shape) for shape, trigger in shapes if agent or not trigger)


def _describe_position(item: Item, k: int) -> str:
    if k < len(item.positions):
        p = item.positions[k]
        return f"({p.x:g}, {p.y:g}, {p.z:g})"
    return "a random position"
