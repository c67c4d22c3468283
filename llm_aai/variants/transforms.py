"""Transformations of an arena that keep its task's logic: each a pure function Arena -> Arena.

Why each one is safe (the validation in ``llm_aai.variants.validation`` checks it anyway):

* ``mirror``: reflecting the arena in the plane x = 20 maps the 40 x 40 floor and its fence
  onto themselves and keeps every distance, so every gap, height, line of sight and path
  length is what it was; only left and right swap. Physics has no handedness, so the task is
  the same task seen in a mirror. Rotations are reflected too, and the one chiral object,
  the L block, becomes its mirror image, the J block (``LObject`` <-> ``LObject2``).
* ``rotate``: a quarter turn (or two, or three) about the arena's centre maps the square
  floor onto itself and keeps every distance; gravity is vertical, so nothing else changes.
* ``translate``: shifting every fixed object by the same amount keeps every distance between
  them; only the gaps to the fence change, so a shift is accepted only if every such gap stays
  in its band (``llm_aai.variants.geometry``): a wall that touched the fence still touches
  it, a corridor along the fence stays passable or impassable.
* ``jitter``: moves (up to a few decimetres) and resizes (walls only, a few per cent) objects
  that touch nothing, and keeps a move only if no gap changes band: a gap narrower than the
  agent stays narrower, a passable one stays passable. Balls keep their size (it is their
  reward), stacked or touching objects do not move (they hold each other up or close a gap).
* ``recolour_walls``: a wall's colour is decoration in Animal-AI; goals, zones, ramps and
  boxes have fixed colours that are the task's vocabulary and are left alone. New colours come
  from a palette of greys and blues that no goal, zone, ramp or the floor uses, and walls that
  shared a colour still share one.
* ``swap_sides``: when everything but the balls is symmetric about the line the agent faces
  along, reflecting in that line leaves the layout as it was and swaps which side each ball
  is on: the same choice with the answer on the other side.

Random values (-1, or an entry missing from a list) stay random: a transformation changes
only the values the file fixes. A transformation that cannot apply to an arena raises
``NotApplicable`` with the reason.
"""

from __future__ import annotations

import dataclasses
import math
import random

import shapely

from llm_aai.arena.geometry import ARENA_SIZE
from llm_aai.arena.model import RGB, Arena, Item, Vector3
from llm_aai.arena.objects import Kind, lookup
from llm_aai.variants.geometry import (
    NotApplicable,
    changed_gaps,
    fixed_objects,
    gap_bands,
    is_fixed_instance,
)

CENTRE = ARENA_SIZE / 2
MIRROR_IMAGES = {"LObject": "LObject2", "LObject2": "LObject"}
"""The chiral objects: the L block's mirror image is the J block (and the other way)."""
_SYMMETRIC_ALONG_Z = {"UObject"}
"""Objects symmetric under their own z -> -z (not x -> -x): the U block (arms toward +x)."""
WALL_PALETTE = ((153, 153, 153), (110, 110, 110), (200, 200, 200), (70, 90, 170),
                (120, 150, 220), (40, 55, 120), (130, 110, 200), (80, 150, 200))
"""Wall colours that no goal, zone, ramp or the floor looks like (greys, blues, violet)."""
MAX_JITTER_M = 0.3
"""The largest move jitter makes (m)."""
MAX_RESIZE = 0.05
"""The largest relative change jitter makes to a wall's width or depth."""
MAX_SHIFT_M = 4.0
"""The largest translation tried along each axis (m)."""
_SYMMETRY_TOLERANCE = 0.01
"""Share of the layout's area that may differ from its reflection and still be symmetric."""


# -- the building blocks: one fixed value mapped at a time -----------------------------------


def _clamp(value: float) -> float:
    """A fixed coordinate as placement reads it: clamped into the floor (a random stays -1)."""
    return value if value < 0 else min(max(value, 0.0), ARENA_SIZE)


def _norm(degrees: float) -> float:
    """An angle in [0, 360), rounded to 1e-9 so that x -> -x -> x returns the same float."""
    value = round(degrees % 360.0, 9)
    return 0.0 if value >= 360.0 else value


def _reflected_yaw(name: str, rotation: float, axis: str) -> tuple[str, float]:
    """The name and YAML rotation of an object reflected in a plane x = a or z = a.

    The placed yaw is the YAML rotation plus the prefab's offset. Reflecting in x = a maps a
    heading of yaw Y to -Y; an object symmetric about its own x = 0 plane (walls, ramps,
    balls, the agent's heading) is then itself at -Y; the U block, symmetric about its own
    z = 0 plane instead, at 180 - Y; the L block becomes the J block at -Y. Reflecting in
    z = a is the x reflection followed by a half turn: 180 more.
    """
    spec = lookup(name)
    new_name = MIRROR_IMAGES.get(spec.name, name)
    yaw = rotation + spec.yaw_offset
    reflected = 180.0 - yaw if spec.name in _SYMMETRIC_ALONG_Z else -yaw
    if axis == "z":
        reflected += 180.0
    return new_name, _norm(reflected - lookup(new_name).yaw_offset)


def _map_items(arena: Arena, item_map) -> Arena:
    return dataclasses.replace(arena, items=tuple(item_map(item) for item in arena.items))


def _with_positions(item: Item, positions) -> Item:
    return dataclasses.replace(item, positions=tuple(positions))


# -- the transformations ---------------------------------------------------------------------


def reflect(arena: Arena, axis: str, at: float) -> Arena:
    """Reflect the arena in the vertical plane ``axis`` = ``at`` (axis "x" or "z").

    Raises:
        NotApplicable: a fixed coordinate would leave the floor (``at`` is not the centre).
    """
    if axis not in ("x", "z"):
        raise ValueError(f"axis must be 'x' or 'z', not {axis!r}")

    def flip(value: float) -> float:
        if value < 0:
            return value
        mirrored = 2 * at - _clamp(value)
        if not -1e-9 <= mirrored <= ARENA_SIZE + 1e-9:
            raise NotApplicable(f"reflecting in {axis} = {at:g} puts an object off the floor")
        return round(min(max(mirrored, 0.0), ARENA_SIZE), 9)

    def item_map(item: Item) -> Item:
        positions = [dataclasses.replace(p, x=flip(p.x)) if axis == "x"
                     else dataclasses.replace(p, z=flip(p.z)) for p in item.positions]
        canonical = lookup(item.name).name  # an alias (LBlock, JBlock) becomes its AAI 3 name
        name = MIRROR_IMAGES.get(canonical, item.name)
        rotations = [r if r < 0 else _reflected_yaw(item.name, r, axis)[1]
                     for r in item.rotations]
        return dataclasses.replace(item, name=name, positions=tuple(positions),
                                   rotations=tuple(rotations))

    return _map_items(arena, item_map)


def mirror(arena: Arena) -> Arena:
    """Reflect the whole arena in x = 20 (x -> 40 - x, rotations mirrored, L <-> J)."""
    return reflect(arena, "x", CENTRE)


def rotate(arena: Arena, quarter_turns: int) -> Arena:
    """Turn the whole arena clockwise (seen from above) by ``quarter_turns`` x 90 degrees.

    A quarter turn about the centre maps (x, z) to (z, 40 - x) and adds 90 degrees to every
    yaw. A random coordinate stays random on the axis it turns onto.
    """
    turns = quarter_turns % 4
    for _ in range(turns):
        arena = _map_items(arena, _quarter_turn)
    return arena


def _quarter_turn(item: Item) -> Item:
    positions = []
    for p in item.positions:
        x, z = _clamp(p.x), _clamp(p.z)
        new_x = z
        new_z = x if x < 0 else round(ARENA_SIZE - x, 9)
        positions.append(dataclasses.replace(p, x=new_x, z=new_z))
    rotations = [r if r < 0 else _norm(r + 90.0) for r in item.rotations]
    return dataclasses.replace(item, positions=tuple(positions), rotations=tuple(rotations))


def translate(arena: Arena, dx: float, dz: float) -> Arena:
    """Shift every fixed coordinate by (dx, dz), if every gap to the fence keeps its band.

    Raises:
        NotApplicable: the shift changes a gap to the fence (or puts an object off the floor).
    """
    def shift(value: float, by: float) -> float:
        if value < 0:
            return value
        moved = _clamp(value) + by
        if not 0.0 <= moved <= ARENA_SIZE:
            raise NotApplicable(f"a shift of ({dx:g}, {dz:g}) puts an object off the floor")
        return round(moved, 9)

    def item_map(item: Item) -> Item:
        return _with_positions(item, (dataclasses.replace(p, x=shift(p.x, dx), z=shift(p.z, dz))
                                      for p in item.positions))

    moved = _map_items(arena, item_map)
    broken = changed_gaps(gap_bands(fixed_objects(arena)), gap_bands(fixed_objects(moved)))
    if broken:
        raise NotApplicable(f"a shift of ({dx:g}, {dz:g}) changes {len(broken)} gap(s) to "
                            "the fence")
    return moved


def random_translation(arena: Arena, rng: random.Random, tries: int = 12) -> Arena:
    """``translate`` by a random shift (at least 0.5 m) that keeps every fence gap.

    Raises:
        NotApplicable: no shift tried kept the gaps (the layout spans or touches the fence).
    """
    before = gap_bands(fixed_objects(arena))
    if not before:
        raise NotApplicable("no fixed object to translate")
    reasons = []
    for attempt in range(tries):
        reach = MAX_SHIFT_M * (1 - attempt / tries) + 0.5
        dx, dz = (round(rng.uniform(-reach, reach), 2) for _ in range(2))
        if math.hypot(dx, dz) < 0.5:
            continue
        try:
            return translate(arena, dx, dz)
        except NotApplicable as error:
            reasons.append(str(error))
    raise NotApplicable("no translation keeps every gap to the fence (the layout reaches the "
                        "fence)")


def jitter(arena: Arena, rng: random.Random) -> Arena:
    """Move free-standing objects a little (and resize free-standing walls), keeping gaps.

    Each object that touches nothing (every gap in the ``open``, ``narrow`` or ``marginal``
    band, none ``touching``) is moved by up to ``MAX_JITTER_M`` in a random direction (walls
    also resized by up to ``MAX_RESIZE``), one object at a time; a change that moves any gap
    into another band is halved, then given up for that object.

    Raises:
        NotApplicable: no object could be moved without changing a gap.
    """
    footprints = fixed_objects(arena)
    bands = gap_bands(footprints)
    touching = {k for key, value in bands.items() if value == "touching"
                for k in key if isinstance(k, tuple)}
    movable = [f for f in footprints if (f.item_index, f.instance_index) not in touching]
    moved_any = False
    for footprint in movable:
        angle = rng.uniform(0, 2 * math.pi)
        distance = rng.uniform(0.1, MAX_JITTER_M)
        resize = (rng.uniform(-MAX_RESIZE, MAX_RESIZE), rng.uniform(-MAX_RESIZE, MAX_RESIZE))
        for scale in (1.0, 0.5):
            candidate = _jittered(arena, footprint.item_index, footprint.instance_index,
                                  distance * scale * math.cos(angle),
                                  distance * scale * math.sin(angle),
                                  tuple(r * scale for r in resize)
                                  if footprint.kind is Kind.WALL else (0.0, 0.0))
            if not changed_gaps(bands, gap_bands(fixed_objects(candidate))):
                arena, bands, moved_any = candidate, gap_bands(fixed_objects(candidate)), True
                break
    if not moved_any:
        raise NotApplicable("no free-standing object can move without changing a gap")
    return arena


def _jittered(arena: Arena, item_index: int, instance: int, dx: float, dz: float,
              resize: tuple[float, float]) -> Arena:
    item = arena.items[item_index]
    positions = list(item.positions)
    p = positions[instance]
    positions[instance] = dataclasses.replace(
        p, x=round(min(max(_clamp(p.x) + dx, 0.0), ARENA_SIZE), 4),
        z=round(min(max(_clamp(p.z) + dz, 0.0), ARENA_SIZE), 4))
    sizes = list(item.sizes)
    if any(resize):
        s = sizes[instance]
        sizes[instance] = dataclasses.replace(s, x=round(s.x * (1 + resize[0]), 4),
                                              z=round(s.z * (1 + resize[1]), 4))
    items = list(arena.items)
    items[item_index] = dataclasses.replace(item, positions=tuple(positions),
                                            sizes=tuple(sizes))
    return dataclasses.replace(arena, items=tuple(items))


def recolour_walls(arena: Arena, rng: random.Random) -> Arena:
    """Give the walls' given colours new ones from ``WALL_PALETTE`` (same colour, same new one).

    Only ``Wall`` items are touched (the transparent wall's colour is fixed by AAI); a colour
    with a random channel stays as it is.

    Raises:
        NotApplicable: the arena has no wall with a given colour.
    """
    colours = sorted({c.as_tuple() for item in arena.items if lookup(item.name).name == "Wall"
                      for c in item.colors if min(c.as_tuple()) >= 0})
    if not colours:
        raise NotApplicable("no wall with a given colour")
    palette = list(WALL_PALETTE)
    rng.shuffle(palette)
    if len(colours) > len(palette):
        palette += [palette[i % len(palette)] for i in range(len(colours) - len(palette))]
    new = dict(zip(colours, palette, strict=False))

    def item_map(item: Item) -> Item:
        if lookup(item.name).name != "Wall":
            return item
        return dataclasses.replace(item, colors=tuple(
            RGB(*new[c.as_tuple()]) if c.as_tuple() in new else c for c in item.colors))

    return _map_items(arena, item_map)


def swap_sides(arena: Arena) -> Arena:
    """Reflect in the line the agent faces along, when only the balls are not symmetric about it.

    Raises:
        NotApplicable: the agent's start is random or not along an axis, the layout (all but
            the balls) is not symmetric about that line, the balls are (nothing to swap), or
            the reflection leaves the floor.
    """
    agent = _fixed_agent(arena)
    if agent is None:
        raise NotApplicable("the agent's start is random: no line of symmetry to swap about")
    position, rotation = agent
    heading = rotation % 180.0
    if min(heading, 180.0 - heading) < 1e-6:
        axis, at = "x", _clamp(position.x)  # facing along z: left/right is x
    elif abs(heading - 90.0) < 1e-6:
        axis, at = "z", _clamp(position.z)
    else:
        raise NotApplicable(f"the agent faces {rotation:g} degrees, not along an axis")
    swapped = reflect(arena, axis, at)
    before, after = _unions(fixed_objects(arena)), _unions(fixed_objects(swapped))
    if before.keys() != after.keys():
        raise NotApplicable(f"the layout is not symmetric about {axis} = {at:g}")
    moved = {name: before[name].symmetric_difference(after[name]).area for name in before}
    if any(area > _SYMMETRY_TOLERANCE * max(before[name].area, 1e-9)
           for name, area in moved.items() if lookup(name).kind is not Kind.GOAL):
        raise NotApplicable(f"the layout is not symmetric about {axis} = {at:g}")
    if all(area < 1e-3 for name, area in moved.items() if lookup(name).kind is Kind.GOAL):
        raise NotApplicable(f"the balls are symmetric about {axis} = {at:g}: nothing to swap")
    return swapped


def _fixed_agent(arena: Arena) -> tuple[Vector3, float] | None:
    for index, item in enumerate(arena.items):
        if lookup(item.name).kind is Kind.AGENT:
            if not is_fixed_instance(arena, index, 0) or not item.rotations or \
                    item.rotations[0] < 0:
                return None
            return item.positions[0], item.rotations[0]
    return None


def _unions(footprints) -> dict:
    """Each object type's footprints as one shape (the agent left out: it is on the line)."""
    names = {f.name for f in footprints if f.kind is not Kind.AGENT}
    return {name: shapely.union_all([f.shape for f in footprints if f.name == name])
            for name in names}
