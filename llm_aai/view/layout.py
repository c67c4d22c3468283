"""The arena an episode was played in, as flat shapes for a top-down map.

An episode does not record where its objects stood; its arena file and seed do. The world is
placed exactly as the episode placed it (``world_seed`` of the episode seed, then
``place_arena``, as ``python -m llm_aai.arenas show --seed`` does), and each object's colliders
become footprints on the floor: rotated rectangles and circles in Unity's (x, z) plane.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from llm_aai.arena.geometry import ARENA_SIZE, Box, Sphere
from llm_aai.arena.objects import Kind
from llm_aai.arena.placement import PlacedArena, PlacedObject, collision_shapes, place_arena
from llm_aai.arena.yaml_io import load_config
from llm_aai.env.animalai_env import world_seed

DRAW_ORDER = (Kind.ZONE, Kind.RAMP, Kind.WALL, Kind.TUNNEL, Kind.U_BLOCK, Kind.BOX, Kind.GOAL)
"""Zones lie on the floor, so they go first; goals last, so nothing hides them."""


@dataclass(frozen=True)
class Footprint:
    """One object's outline on the floor.

    Attributes:
        name: the object type (``GoodGoal``, ``Wall``...).
        kind: its family (``goal``, ``zone``, ``wall``...), used as a CSS class.
        points: polygon corners in Unity (x, z), for boxes, ramps, tunnels and zones.
        circle: ``(x, z, radius)`` for balls.
        colour: ``#rrggbb``.
        opacity: 1 for solid objects, less for transparent walls and zones.

    """

    name: str
    kind: str
    points: tuple[tuple[float, float], ...] = ()
    circle: tuple[float, float, float] | None = None
    colour: str = "#888888"
    opacity: float = 1.0


@dataclass(frozen=True)
class Layout:
    """What a map draws under the path: the footprints and where the agent started.

    ``objects`` names every placed object once (a U-shape has several footprints);
    ``time_limit`` is the arena's ``t``; ``notes`` say which instances placement dropped.
    """

    footprints: tuple[Footprint, ...]
    start: tuple[float, float]
    start_yaw: float
    objects: tuple[str, ...] = ()
    time_limit: int = 0
    size: float = ARENA_SIZE
    notes: tuple[str, ...] = ()


def episode_layout(arena_path: Path, seed: int) -> Layout:
    """Place the arena as the episode with ``seed`` placed it and outline every object.

    Raises:
        ArenaError: the file does not parse (message names the file and line).
        PlacementError: the agent finds no free spot (an unplayable arena).

    """
    return _layout(Path(arena_path).resolve(), Path(arena_path).stat().st_mtime_ns, int(seed))


@lru_cache(maxsize=512)
def _layout(path: Path, _mtime: int, seed: int) -> Layout:
    placed = place_arena(_arena(path, _mtime), np.random.default_rng(world_seed(seed)),
                         source=str(path))
    return _outline(placed)


@lru_cache(maxsize=64)
def _arena(path: Path, _mtime: int):
    return load_config(path).arena()


def _outline(placed: PlacedArena) -> Layout:
    order = {kind: i for i, kind in enumerate(DRAW_ORDER)}
    objects = sorted(placed.objects, key=lambda obj: order.get(obj.spec.kind, len(order)))
    footprints = tuple(footprint for obj in objects for footprint in _footprints(obj))
    x, _, z = placed.agent.position
    return Layout(footprints, (x, z), placed.agent.yaw,
                  objects=tuple(obj.spec.name for obj in placed.objects),
                  time_limit=placed.arena.time_limit, notes=placed.dropped)


def _footprints(obj: PlacedObject) -> list[Footprint]:
    colour = "#{:02x}{:02x}{:02x}".format(*(round(255 * c) for c in obj.color))
    opacity = min(1.0, obj.spec.alpha) if obj.spec.kind is not Kind.ZONE else 0.75
    out = []
    for shape in collision_shapes(obj):
        common = {"name": obj.spec.name, "kind": str(obj.spec.kind), "colour": colour,
                  "opacity": opacity}
        if isinstance(shape, Sphere):
            x, _, z = shape.center
            out.append(Footprint(circle=(x, z, shape.radius), **common))
        else:
            out.append(Footprint(points=_corners(Box(shape.center, shape.half, shape.yaw)),
                                 **common))
    return out


def _corners(box: Box) -> tuple[tuple[float, float], ...]:
    """The four floor corners of a rotated box, in (x, z)."""
    (ax, az), (bx, bz) = box.axes()
    cx, _, cz = box.center
    hx, _, hz = box.half
    return tuple((cx + sx * hx * ax + sz * hz * bx, cz + sx * hx * az + sz * hz * bz)
                 for sx, sz in ((-1, -1), (1, -1), (1, 1), (-1, 1)))


def heading(yaw: float) -> tuple[float, float]:
    """The unit vector an agent with Unity ``yaw`` faces, in (x, z): clockwise from +z."""
    theta = math.radians(yaw)
    return math.sin(theta), math.cos(theta)
