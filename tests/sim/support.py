"""Which objects of a placed arena gravity should leave still: the stability test's oracle.

Read from the arena's geometry alone (never from the simulation it judges): an object is
*expected still* when it rests on the floor, or on the flat tops of expected-still objects with
its centre of mass over the region where they hold it, and nothing that moves by design can
reach it. What moves by design:

- an object not held that way (a rail resting on one pillar of two, a plank overhanging its
  post, a ball in the air or balanced between two rails, anything on a ramp's slope);
- a bounce ball (kicked at 10 m/s at the start);
- an object within reach of a moving wall or ramp (it can fall that far) is not expected still
  either (it may be knocked), nor is what rests on it; a knock shifts it, it does not hurl it,
  so it does not count as a mover in turn.

A light mover (a ball or a box, at most 2 kg) cannot shift a 1-10 t wall or ramp by a
centimetre, so it disqualifies only the light objects (balls, boxes, U/L/J blocks) of the arena.
Tunnels are welded to the world and never move. Everything here is in Unity coordinates.
"""

from __future__ import annotations

from dataclasses import dataclass

from shapely import Point, Polygon, unary_union

from llm_aai.arena.objects import Kind
from llm_aai.arena.placement import PlacedArena, PlacedObject, collision_shapes, spawn_box

FLOOR_TOP = -0.01
RESTING_GAP = 0.03
"""m: an object whose bottom is within this of a support's top rests on it (AAI lifts every
object 1 cm above its YAML y, and sizes carry a 0.999 factor)."""
HEAVY = (Kind.WALL, Kind.RAMP)


@dataclass
class Solid:
    """One placed object seen as a rigid body."""

    index: int
    obj: PlacedObject
    footprint: Polygon  # union of its pieces' footprints (x, z)
    bottom: float
    top: float
    centre: tuple[float, float]  # centre of mass (x, z)

    @property
    def kind(self) -> Kind:
        return self.obj.spec.kind

    @property
    def heavy(self) -> bool:
        return self.kind in HEAVY

    @property
    def flat_top(self) -> bool:
        """Whether others can rest on its top face (walls, boxes, blocks; not ramps, balls)."""
        return self.kind in (Kind.WALL, Kind.BOX, Kind.U_BLOCK)

    @property
    def reach(self) -> float:
        """How far from its footprint it can land if it falls (its largest extent)."""
        return max(self.obj.size)


def _rectangle(box) -> Polygon:
    (ax, az), (bx, bz) = box.axes()
    hx, _, hz = box.half
    cx, _, cz = box.center
    return Polygon([(cx + sx * hx * ax + sz * hz * bx, cz + sx * hx * az + sz * hz * bz)
                    for sx, sz in ((-1, -1), (1, -1), (1, 1), (-1, 1))])


def _solid(index: int, obj: PlacedObject) -> Solid | None:
    kind = obj.spec.kind
    if kind in (Kind.ZONE, Kind.TUNNEL, Kind.AGENT):
        return None
    x, bottom, z = obj.position
    if kind is Kind.GOAL:
        radius = obj.size[0] / 2
        return Solid(index, obj, Point(x, z).buffer(radius), bottom, bottom + obj.size[0], (x, z))
    boxes = [spawn_box(obj)] if kind is Kind.RAMP else collision_shapes(obj)
    footprint = unary_union([_rectangle(box) for box in boxes])
    centroid = footprint.centroid
    if kind is Kind.RAMP:  # a wedge's mass sits a third of its length toward the tall end
        (_, _), (bx, bz) = boxes[0].axes()
        shift = -obj.size[2] / 6
        centroid = Point(x + shift * bx, z + shift * bz)
    return Solid(index, obj, footprint, bottom, bottom + obj.size[1], (centroid.x, centroid.y))


def _held(solid: Solid, supports: list[Solid]) -> bool:
    """Whether ``supports`` (flat tops just below it) hold ``solid`` with its mass over them."""
    if solid.kind is Kind.GOAL:  # a ball touches a flat top at the point below its centre
        point = Point(solid.centre)
        return any(s.footprint.buffer(-0.01).contains(point) for s in supports)
    regions = [solid.footprint.intersection(s.footprint) for s in supports]
    regions = [r for r in regions if r.area > 1e-6]
    if not regions:
        return False
    hull = unary_union(regions).convex_hull
    return hull.buffer(-0.01).contains(Point(solid.centre))


def expected_still(placed: PlacedArena) -> dict[int, str]:
    """The objects gravity should leave still: ``{index in placed.objects: description}``."""
    solids = [s for s in (_solid(i, o) for i, o in enumerate(placed.objects)) if s is not None]
    on_floor = {s.index for s in solids if s.bottom <= FLOOR_TOP + RESTING_GAP}
    below: dict[int, list[Solid]] = {
        s.index: [o for o in solids if o is not s and o.flat_top
                  and 0.0 <= s.bottom - o.top <= RESTING_GAP
                  and s.footprint.intersects(o.footprint)]
        for s in solids
    }
    still = {s.index for s in solids}
    movers: list[Solid] = [s for s in solids if s.obj.spec.bounce]
    still -= {s.index for s in movers}
    changed = True
    while changed:
        changed = False
        for s in solids:
            if s.index not in still:
                continue
            if s.index in on_floor:
                held = True
            else:
                supports = [o for o in below[s.index] if o.index in still]
                held = _held(s, supports) and len(supports) == len(below[s.index])
            reached = any(
                (m.heavy or not s.heavy)
                and (not m.heavy or s.footprint.distance(m.footprint) <= m.reach)
                for m in movers
            )
            if not held or reached:
                still.discard(s.index)
                if not held:  # what a mover knocks may shift, but is not hurled about
                    movers.append(s)
                changed = True
    return {s.index: f"{s.obj.spec.name} #{s.index} at "
            f"{tuple(round(v, 2) for v in s.obj.position)}" for s in solids if s.index in still}
