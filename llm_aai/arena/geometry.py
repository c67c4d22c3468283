"""Yaw-rotated boxes and spheres, and the overlap tests AAI's spawner relies on.

AAI decides whether a spawn spot is free with ``Physics.OverlapBox``: an oriented box (yaw
only) tested against the colliders already in the arena. Every collider in the arena is
either a yaw-rotated box or a sphere, so two shape types and two tests are all the placer
needs. Overlap is *strict*: shapes that only touch are free, because AAI's 0.999 size factor
exists precisely so that objects laid edge to edge in a YAML file do not block each other.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

ARENA_SIZE = 40.0
"""Side of the square play area, x and z in [0, 40]."""


@dataclass(frozen=True)
class Box:
    """A box rotated about the vertical axis.

    Attributes:
        center: (x, y, z) of the box centre.
        half: half extents (x, y, z) in the box's own frame.
        yaw: degrees, clockwise seen from above (Unity's convention).

    """

    center: tuple[float, float, float]
    half: tuple[float, float, float]
    yaw: float

    def axes(self) -> tuple[tuple[float, float], tuple[float, float]]:
        """Return the box's local x and z axes in world (x, z), Unity yaw convention."""
        return self._axes

    @cached_property
    def _axes(self) -> tuple[tuple[float, float], tuple[float, float]]:
        # once per box: a zone's box is tested on every physics step
        theta = math.radians(self.yaw)
        cos, sin = math.cos(theta), math.sin(theta)
        return (cos, -sin), (sin, cos)

    def footprint_half(self) -> tuple[float, float]:
        """Half extents (x, z) of the world-aligned rectangle that bounds the rotated box."""
        (ax, az), (bx, bz) = self.axes()
        hx, _, hz = self.half
        return abs(ax) * hx + abs(bx) * hz, abs(az) * hx + abs(bz) * hz


@dataclass(frozen=True)
class Sphere:
    """A ball (goals and the agent)."""

    center: tuple[float, float, float]
    radius: float


@dataclass(frozen=True)
class Wedge:
    """A ramp's collider: a triangular prism, tall vertical end on its local -z side.

    Attributes:
        center: (x, y, z) of its bounding box centre.
        half: half extents (x, y, z) of that bounding box in the wedge's own frame.
        yaw: degrees, clockwise seen from above.

    """

    center: tuple[float, float, float]
    half: tuple[float, float, float]
    yaw: float


@dataclass(frozen=True)
class Arch:
    """A tunnel's collider: a thin half-pipe shell, open at both ends, axis along local z.

    Its bounding box is ``center``/``half`` (half[1] is half the arch's height). Objects
    entirely inside the hollow (an elliptic half-cylinder ``wall`` thinner than the box) do
    not touch it, which is how AAI's non-convex mesh collider lets goals spawn inside.
    """

    center: tuple[float, float, float]
    half: tuple[float, float, float]
    yaw: float
    wall: float = 0.05  # shell thickness as a fraction of the radius

    def bounds(self) -> Box:
        """Return the arch's bounding box."""
        return Box(self.center, self.half, self.yaw)


Shape = Box | Sphere | Wedge | Arch


def _intervals_overlap(c1: float, r1: float, c2: float, r2: float) -> bool:
    return abs(c1 - c2) < r1 + r2


def boxes_overlap(a: Box, b: Box) -> bool:
    """Strict overlap of two yaw-rotated boxes (separating-axis test on the floor plane)."""
    if not _intervals_overlap(a.center[1], a.half[1], b.center[1], b.half[1]):
        return False
    dx, dz = b.center[0] - a.center[0], b.center[2] - a.center[2]
    a_axes, b_axes = a.axes(), b.axes()
    for axis in (*a_axes, *b_axes):
        radius_a = sum(abs(axis[0] * u[0] + axis[1] * u[1]) * h
                       for u, h in zip(a_axes, (a.half[0], a.half[2]), strict=True))
        radius_b = sum(abs(axis[0] * u[0] + axis[1] * u[1]) * h
                       for u, h in zip(b_axes, (b.half[0], b.half[2]), strict=True))
        if abs(dx * axis[0] + dz * axis[1]) >= radius_a + radius_b:
            return False
    return True


def box_sphere_overlap(box: Box, sphere: Sphere) -> bool:
    """Strict overlap of a yaw-rotated box and a sphere (closest-point distance).

    Written out axis by axis: the simulator asks it for every zone on every physics step.
    """
    (ax, az), (bx, bz) = box.axes()
    sx, sy, sz = sphere.center
    cx, cy, cz = box.center
    hx, hy, hz = box.half
    dx, dz = sx - cx, sz - cz
    gap_x = max(abs(dx * ax + dz * az) - hx, 0.0)
    gap_y = max(abs(sy - cy) - hy, 0.0)
    gap_z = max(abs(dx * bx + dz * bz) - hz, 0.0)
    return gap_x**2 + gap_y**2 + gap_z**2 < sphere.radius**2


def _local(point, center, yaw):
    """World point -> (lx, y, lz) in a frame centred at ``center`` and rotated by ``yaw``."""
    (ax, az), (bx, bz) = Box(center, (0, 0, 0), yaw).axes()
    dx, dz = point[0] - center[0], point[2] - center[2]
    return dx * ax + dz * az, point[1], dx * bx + dz * bz


def box_corners(box: Box) -> list[tuple[float, float, float]]:
    """Return the eight corners of a box in world coordinates."""
    (ax, az), (bx, bz) = box.axes()
    cx, cy, cz = box.center
    hx, hy, hz = box.half
    return [(cx + i * hx * ax + k * hz * bx, cy + j * hy, cz + i * hx * az + k * hz * bz)
            for i in (-1, 1) for j in (-1, 1) for k in (-1, 1)]


def _wedge_corners(wedge: Wedge) -> list[tuple[float, float, float]]:
    (ax, az), (bx, bz) = Box(wedge.center, wedge.half, wedge.yaw).axes()
    cx, cy, cz = wedge.center
    hx, hy, hz = wedge.half
    local = [(i * hx, -hy, -hz) for i in (-1, 1)] + [(i * hx, hy, -hz) for i in (-1, 1)]
    local += [(i * hx, -hy, hz) for i in (-1, 1)]
    return [(cx + lx * ax + lz * bx, cy + ly, cz + lx * az + lz * bz) for lx, ly, lz in local]


def _cross(u, v):
    return (u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0])


def box_wedge_overlap(box: Box, wedge: Wedge) -> bool:
    """Strict overlap of a box and a ramp wedge (separating-axis test in 3D)."""
    (bax, baz), (bbx, bbz) = box.axes()
    (wax, waz), (wbx, wbz) = Box(wedge.center, wedge.half, wedge.yaw).axes()
    hy, hz = wedge.half[1], wedge.half[2]
    up = (0.0, 1.0, 0.0)
    box_edges = [(bax, 0.0, baz), up, (bbx, 0.0, bbz)]
    # the slope runs from the tall end (-z, top) down to the far end (+z, bottom)
    slope = (2 * hz * wbx, -2 * hy, 2 * hz * wbz)
    wedge_edges = [(wax, 0.0, waz), up, (wbx, 0.0, wbz), slope]
    slope_normal = _cross((wax, 0.0, waz), slope)
    axes = [*box_edges, *wedge_edges[:3], slope_normal]
    axes += [_cross(u, v) for u in box_edges for v in wedge_edges]
    points_a, points_b = box_corners(box), _wedge_corners(wedge)
    for axis in axes:
        if sum(c * c for c in axis) < 1e-12:
            continue
        pa = [sum(p[i] * axis[i] for i in range(3)) for p in points_a]
        pb = [sum(p[i] * axis[i] for i in range(3)) for p in points_b]
        if max(pa) <= min(pb) or max(pb) <= min(pa):
            return False
    return True


def box_arch_overlap(box: Box, arch: Arch) -> bool:
    """Strict overlap of a box and a tunnel shell: touching the box but not inside the hollow."""
    if not boxes_overlap(box, arch.bounds()):
        return False
    radius_x = arch.half[0] * (1 - arch.wall)
    radius_y = 2 * arch.half[1] * (1 - arch.wall)
    floor = arch.center[1] - arch.half[1]
    for corner in box_corners(box):
        lx, y, _ = _local(corner, arch.center, arch.yaw)
        if (lx / radius_x) ** 2 + ((y - floor) / radius_y) ** 2 >= 1:
            return True
    return False


def overlaps(box: Box, shape: Shape) -> bool:
    """Whether the candidate ``box`` strictly overlaps an existing collider ``shape``."""
    if isinstance(shape, Sphere):
        return box_sphere_overlap(box, shape)
    if isinstance(shape, Wedge):
        return box_wedge_overlap(box, shape)
    if isinstance(shape, Arch):
        return box_arch_overlap(box, shape)
    return boxes_overlap(box, shape)


def crosses_fence(box: Box) -> bool:
    """Whether the box pokes through AAI's invisible outer walls (inner faces at 0 and 40)."""
    half_x, half_z = box.footprint_half()
    x, _, z = box.center
    return x - half_x < 0 or z - half_z < 0 or x + half_x > ARENA_SIZE or z + half_z > ARENA_SIZE
