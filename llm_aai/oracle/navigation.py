"""A walking map of the arena, for the oracle's search heuristic (privileged knowledge).

The search simulates; this only says *where to head*. From the live simulator it reads the
geometry (with MuJoCo ray casts, so tilted planks, ramps and tunnels count as they are), the
goals and the hazards, and answers: how far, walking, is the nearest good goal from a point,
and which way leads there.

The map is a 0.5 m grid over the 40 m arena. Each cell has the height of the surface the
agent would stand on: the floor-level surface where there is headroom above it (under a
tunnel's arch or a raised plank), else the top surface. The agent may step between
neighbouring cells that rise by at most ``STEP_UP`` (``RAMP_UP`` on ramps) and drop any
height. Death zones and red balls (widened by the agent's radius) are impassable; hot zones
cost extra. Distances are Dijkstra distances to a goal's cell over that graph.
"""

from __future__ import annotations

import hashlib
import heapq
import math
from dataclasses import dataclass

import numpy as np

from llm_aai.arena.geometry import Sphere, box_sphere_overlap
from llm_aai.oracle.leaps import Leap, find_leaps
from llm_aai.sim.coords import to_unity

CELL = 0.5
SIZE = 40.0
N = int(SIZE / CELL)
STEP_UP = 0.2
"""Largest rise (m) between two 0.5 m cells the agent can roll over off a ramp."""
RAMP_UP = 0.55
"""Largest rise between cells of a ramp (slopes up to about 48 degrees): the agent climbs the
testbed's 45-degree ramps, 1 m high and 1 m long (06-20-02)."""
HEADROOM = 1.05
"""Free height above a surface for the agent (1 m ball) to be under something."""
HOT_COST_CAP = 25.0
"""Most a metre inside a hot zone costs, in metres outside (an arena without a time limit
has no decay to weigh the zone's drain against)."""
WALL_COST = 3.0
DEATH_MARGIN = 1.0
"""Cells whose agent would pass within this of a death zone are kept off like walls."""
AGENT_RADIUS = 0.5
LEAP_START = 0.8
"""How near a leap's start (m) the agent commits to it."""
HOT_REACH = 120
"""Most cells a waypoint looks ahead along a path through a hot zone (its far side)."""
UNREACHABLE = math.inf
_NEIGHBOURS = [(-1, 0, 1.0), (1, 0, 1.0), (0, -1, 1.0), (0, 1, 1.0),
               (-1, -1, math.sqrt(2)), (-1, 1, math.sqrt(2)), (1, -1, math.sqrt(2)),
               (1, 1, math.sqrt(2))]


@dataclass(frozen=True)
class Goal:
    """A ball the oracle may want, as it is now (Unity coordinates).

    Attributes:
        geom: its MuJoCo geom id (the key the simulator's rules use).
        name: object name (``GoodGoal``, ``GoodGoalMulti``...).
        reward: what touching it pays (its size for good balls).
        multi: collecting it does not end the episode by itself.
        position: centre now.
        radius: its radius.
    """

    geom: int
    name: str
    reward: float
    multi: bool
    position: tuple[float, float, float]
    radius: float


def live_goals(sim) -> tuple[list[Goal], list[Goal]]:
    """(good goals still in play, bad goals) read from the simulator's own state.

    This is the oracle's privilege: a real agent only sees pixels.
    """
    data, model = sim._data, sim._model
    good, bad = [], []
    for geom, goal in sim._goals.items():
        if model.geom_contype[geom] == 0 and model.geom_conaffinity[geom] == 0:
            continue  # a collected multi goal
        info = goal.info
        centre = to_unity(data.geom_xpos[geom])
        radius = float(model.geom_size[geom, 0])
        item = Goal(geom, info.name, float(info.reward), bool(info.spec.multi), centre, radius)
        (good if info.reward > 0 else bad).append(item)
    return good, bad


def agent_pose(sim) -> tuple[float, float, float, float]:
    """(x, y, z, yaw) of the agent in Unity coordinates."""
    x, y, z = to_unity(sim._agent.position)
    return x, y, z, sim._agent.yaw


@dataclass(frozen=True)
class Waypoint:
    """A point to head for (Unity x, z) and whether to arrive there at rest.

    Attributes:
        x: Unity x.
        z: Unity z.
        stop: arrive without momentum (the way turns there, next to a hot zone it then
            crosses straight: a turn at speed would drift on into the zone or past it).
    """

    x: float
    z: float
    stop: bool = False


class NavMap:
    """Heights, passability and goal distances over the arena grid (see the module doc).

    Args:
        sim: a loaded simulator (read, never stepped).
    """

    def __init__(self, sim) -> None:
        self.height, self.ramp = _surface(sim)
        self.blocked = np.zeros((N, N), dtype=bool)
        self.hot = np.zeros((N, N), dtype=bool)
        # Cells next to a rise the agent cannot take: its centre would be within its radius
        # of a wall. Dearer, not forbidden, so paths keep off walls but still use narrow gaps.
        self.near_wall = _next_to_walls(self.height, self.ramp)
        self._fields: dict[tuple, np.ndarray] = {}
        hot_cost = _hot_cost(sim)
        centres = (np.arange(N) + 0.5) * CELL
        _, bad = live_goals(sim)
        for zone in sim._zones:
            death = zone.spec.ends_episode
            for i in range(N):
                for j in range(N):
                    if self.blocked[i, j]:
                        continue
                    at = (float(centres[i]), float(self.height[i, j]) + AGENT_RADIUS,
                          float(centres[j]))
                    margin = 0.15 if death else 0.0
                    if box_sphere_overlap(zone.box, Sphere(at, AGENT_RADIUS + margin)):
                        if death:
                            self.blocked[i, j] = True
                        else:
                            self.hot[i, j] = True
                    elif death and box_sphere_overlap(zone.box,
                                                      Sphere(at, AGENT_RADIUS + DEATH_MARGIN)):
                        # near the edge: momentum or a turn's drift could carry it in
                        self.near_wall[i, j] = True
        # a hot cell near a wall or a death zone costs both: paths keep to a strip's middle
        self.cost = np.where(self.near_wall, WALL_COST, 1.0) * np.where(self.hot, hot_cost, 1.0)
        for ball in bad:
            reach = ball.radius + AGENT_RADIUS + 0.3
            x0, _, z0 = ball.position
            di = (centres[:, None] - x0) ** 2 + (centres[None, :] - z0) ** 2
            self.blocked |= di < reach * reach
        self.leaps = _leaps(self)
        self._leaps_into: dict[tuple[int, int], list[Leap]] = {}
        self._leaps_from: dict[tuple[int, int], list[Leap]] = {}
        for leap in self.leaps:
            self._leaps_into.setdefault(leap.land, []).append(leap)
            self._leaps_from.setdefault(leap.start, []).append(leap)

    @staticmethod
    def cell(x: float, z: float) -> tuple[int, int]:
        """Grid cell of a Unity (x, z) point, clamped into the arena."""
        i = min(max(int(x / CELL), 0), N - 1)
        j = min(max(int(z / CELL), 0), N - 1)
        return i, j

    def can_step(self, a: tuple[int, int], b: tuple[int, int]) -> bool:
        """Whether the agent can move from cell ``a`` to the neighbouring cell ``b``."""
        if self.blocked[b]:
            return False
        rise = self.height[b] - self.height[a]
        limit = RAMP_UP if (self.ramp[a] or self.ramp[b]) else STEP_UP
        return rise <= limit

    def field(self, goal: Goal, avoid: tuple[tuple[float, float, float], ...] = ()
              ) -> np.ndarray:
        """Walking distance (m) from every cell to ``goal`` (inf where it cannot be reached).

        ``avoid`` holds extra discs (centre x, centre z, radius) to walk round, such as a
        block the agent means to push from its far side.
        """
        x, y, z = goal.position
        target = self.cell(x, z)
        # the ball must lie on the surface of its cell (not on a rail above it, not in the air)
        if y - goal.radius > self.height[target] + 0.6:
            return np.full((N, N), UNREACHABLE)
        cached = self._fields.get((target, avoid))
        if cached is None:
            cached = self._dijkstra(target, avoid)
            self._fields[(target, avoid)] = cached
        return cached

    def _dijkstra(self, target: tuple[int, int],
                  avoid: tuple[tuple[float, float, float], ...] = ()) -> np.ndarray:
        """Distances *to* ``target``: search backwards along the steps the agent can take."""
        dist = np.full((N, N), UNREACHABLE)
        dist[target] = 0.0
        heap = [(0.0, target)]
        height, ramp, blocked, cost = self.height, self.ramp, self.blocked, self.cost
        if avoid:
            centres = (np.arange(N) + 0.5) * CELL
            blocked = blocked.copy()
            for cx, cz, radius in avoid:
                near = (centres[:, None] - cx) ** 2 + (centres[None, :] - cz) ** 2
                blocked |= near < radius * radius
            blocked[target] = False
        leaps_into = self._leaps_into
        while heap:
            d, (i, j) = heapq.heappop(heap)
            if d > dist[i, j]:
                continue
            for leap in leaps_into.get((i, j), ()):
                nd = d + leap.length
                if nd < dist[leap.start]:
                    dist[leap.start] = nd
                    heapq.heappush(heap, (nd, leap.start))
            for di, dj, length in _NEIGHBOURS:
                a = (i + di, j + dj)  # a predecessor: a step a -> (i, j)
                if not (0 <= a[0] < N and 0 <= a[1] < N) or blocked[a]:
                    continue
                limit = RAMP_UP if (ramp[a] or ramp[i, j]) else STEP_UP
                if height[i, j] - height[a] > limit:
                    continue
                nd = d + length * CELL * cost[a]
                if nd < dist[a]:
                    dist[a] = nd
                    heapq.heappush(heap, (nd, a))
        return dist

    def distance(self, field: np.ndarray, x: float, z: float) -> float:
        """Distance from a point using ``field``, interpolated from the nearest reachable cells."""
        i, j = self.cell(x, z)
        best = field[i, j]
        if best < UNREACHABLE:
            cx, cz = (i + 0.5) * CELL, (j + 0.5) * CELL
            return float(best) + math.hypot(x - cx, z - cz) * 0.5
        # off the graph (inside a margin, mid-fall): the best neighbour plus the way there
        for di in (-1, 0, 1):
            for dj in (-1, 0, 1):
                a, b = i + di, j + dj
                if 0 <= a < N and 0 <= b < N and field[a, b] < UNREACHABLE:
                    cx, cz = (a + 0.5) * CELL, (b + 0.5) * CELL
                    best = min(best, float(field[a, b]) + math.hypot(x - cx, z - cz))
        return float(best)

    @staticmethod
    def centre(cell: tuple[int, int]) -> tuple[float, float]:
        """Unity (x, z) of a cell's centre."""
        return ((cell[0] + 0.5) * CELL, (cell[1] + 0.5) * CELL)

    def leap_at(self, field: np.ndarray, x: float, z: float) -> Leap | None:
        """The leap whose run-up starts where the agent is, if the way down ``field`` takes it.

        The agent counts as at a leap's start within ``LEAP_START`` of its centre (moving, it
        may cross the start cell's corner).
        """
        i, j = self.cell(x, z)
        for di in (-1, 0, 1):
            for dj in (-1, 0, 1):
                for leap in self._leaps_from.get((i + di, j + dj), ()):
                    if (field[leap.land] + leap.length <= field[leap.start] + 1e-9
                            and math.dist((x, z), self.centre(leap.start)) < LEAP_START):
                        return leap
        return None

    def waypoint(self, field: np.ndarray, x: float, z: float, reach: int = 12
                 ) -> Waypoint | None:
        """A point down the distance field from (x, z) to head for.

        It is the farthest of the next ``reach`` cells along the path that can be reached in
        a straight line (pulling the string), or a leap's landing once the agent is at the
        leap's start (it stops at the start first). A path into a hot zone is followed until
        it leaves the zone: from outside, the point is either before the zone or past it in
        one straight crossing, so the agent turns before it enters, not inside; a point
        before the zone is one to stop at (``Waypoint.stop``), as the crossing turns there.
        """
        here = self.cell(x, z)
        if field[here] == UNREACHABLE:
            # off the graph (in a margin, or a disc the field walks round): back onto it first
            i, j = here
            nearby = [(field[a, b], (a, b)) for a in range(i - 1, i + 2)
                      for b in range(j - 1, j + 2)
                      if 0 <= a < N and 0 <= b < N and field[a, b] < UNREACHABLE]
            return Waypoint(*self.centre(min(nearby)[1])) if nearby else None
        leap = self.leap_at(field, x, z)
        if leap is not None:
            return Waypoint(*self.centre(leap.land))
        path = [here]
        current = here
        limit = reach
        while len(path) <= limit:
            i, j = current
            best, best_d = None, field[current]
            for di, dj, _ in _NEIGHBOURS:
                a = (i + di, j + dj)
                if (0 <= a[0] < N and 0 <= a[1] < N and field[a] < best_d
                        and self.can_step(current, a)):
                    best, best_d = a, field[a]
            if best is None:
                break  # the goal, or a leap's start: walk there first
            path.append(best)
            current = best
            if best_d == 0.0:
                break
            if self.hot[best]:
                limit = min(max(limit, len(path) + 1), HOT_REACH)  # on to the zone's far side
        hot_before = np.cumsum([bool(self.hot[c]) for c in path])
        inside = [k for k, c in enumerate(path) if self.hot[c]]
        if inside and not self.hot[here]:
            enter = inside[0]
            leave = next((k for k in range(enter, len(path)) if not self.hot[path[k]]),
                         len(path))
            crossing = [k for k in range(len(path) - 1, 0, -1) if k < enter or k >= leave]
            for k in crossing:
                if self._straight(here, path[k], int(hot_before[k]), field):
                    return Waypoint(*self.centre(path[k]), stop=k < enter)
        for k in range(len(path) - 1, 0, -1):
            if self._straight(here, path[k], int(hot_before[k]), field):
                return Waypoint(*self.centre(path[k]))
        return Waypoint(*self.centre(path[1] if len(path) > 1 else here))

    def _straight(self, a: tuple[int, int], b: tuple[int, int], hot_allowed: int = 0,
                  field: np.ndarray | None = None) -> bool:
        """Whether the agent can roll straight from cell a to cell b.

        Each step along the segment must be allowed, and the segment must keep off walls
        (the agent's radius would catch a corner the cell centres clear). It may cross at
        most ``hot_allowed`` hot cells (as many as the path it shortens crosses), any if it
        starts or ends in a hot zone. With ``field``, it may not pass a cell the field cannot
        reach its target from (a trap, or a disc the field walks round).
        """
        steps = max(abs(b[0] - a[0]), abs(b[1] - a[1])) * 2
        previous = a
        clear = not self.near_wall[a]  # a start against a wall may leave it
        hot_ends = self.hot[a] or self.hot[b]
        hot = 0
        for k in range(1, steps + 1):
            t = k / steps
            cell = (round(a[0] + (b[0] - a[0]) * t), round(a[1] + (b[1] - a[1]) * t))
            if cell != previous:
                if not self.can_step(previous, cell):
                    return False
                if field is not None and field[cell] == UNREACHABLE:
                    return False
                if self.hot[cell] and not hot_ends:
                    hot += 1
                    if hot > hot_allowed:
                        return False  # no shortcut into a hot zone the path keeps out of
                if self.near_wall[cell]:
                    if clear and cell != b:
                        return False  # it would graze a wall or a corner on the way
                else:
                    clear = True
                previous = cell
        return True


_LEAP_CACHE: dict[bytes, list[Leap]] = {}


def _leaps(nav: NavMap) -> list[Leap]:
    """The map's leaps (``llm_aai.oracle.leaps``), remembered for maps with the same cells.

    An episode's map is made again for every script, mostly unchanged.
    """
    key = nav.height.round(3).tobytes() + nav.blocked.tobytes() + nav.ramp.tobytes()
    key = hashlib.sha256(key).digest()
    leaps = _LEAP_CACHE.get(key)
    if leaps is None:
        if len(_LEAP_CACHE) >= 16:
            _LEAP_CACHE.clear()
        leaps = _LEAP_CACHE[key] = find_leaps(nav.height, nav.blocked, nav.ramp,
                                              nav.can_step, CELL)
    return leaps


def _hot_cost(sim) -> float:
    """What a metre in a hot zone costs, in metres outside.

    The health it drains there (the zone's rate plus the decay) over the decay every metre
    walked costs anyway.
    """
    rules = sim._rules
    if not rules.decay:
        return HOT_COST_CAP
    return min((rules.decay + rules.hot) / rules.decay, HOT_COST_CAP)


def _next_to_walls(height: np.ndarray, ramp: np.ndarray) -> np.ndarray:
    """Cells with a neighbour (8-connected) that rises more than a step above them."""
    near = np.zeros_like(height, dtype=bool)
    padded = np.pad(height, 1, mode="edge")
    for di in (-1, 0, 1):
        for dj in (-1, 0, 1):
            if di or dj:
                neighbour = padded[1 + di : N + 1 + di, 1 + dj : N + 1 + dj]
                near |= (neighbour - height > STEP_UP) & ~ramp
    return near


def _surface(sim) -> tuple[np.ndarray, np.ndarray]:
    """(height of the standing surface, whether it is a ramp) per cell, by casting rays.

    Rays see the arena's solid geometry only: balls, boxes (pushable), zones and the agent
    are hidden for the cast, and so is the floor (a ray that meets nothing stands on it).
    Without the floor, a ray cast down from inside a solid always leaves through the solid's
    own underside: walls are free bodies resting on the floor and sink a millimetre or two
    into it (MuJoCo's soft contact), so with the floor in the cast that ray met the floor
    first and a standing wall read as an overhead one, open underneath.
    """
    import mujoco

    model, data = sim._model, sim._data
    hidden = {int(goal) for goal in sim._goals}
    hidden |= {g for g in range(model.ngeom)
               if model.body_weldid[model.geom_bodyid[g]] != 0 and
               model.body_jntnum[model.geom_bodyid[g]] > 0 and
               model.jnt_type[model.body_jntadr[model.geom_bodyid[g]]] == mujoco.mjtJoint.mjJNT_FREE
               and model.body_mass[model.geom_bodyid[g]] < 50.0}
    cast_hidden = hidden | {int(mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, "floor"))}
    saved = model.geom_group.copy()
    groups = np.array([1, 0, 0, 0, 0, 0], dtype=np.uint8)  # solid geometry only
    height = np.zeros((N, N))
    ramp = np.zeros((N, N), dtype=bool)
    geom = np.zeros(1, dtype=np.int32)
    down, up = np.array([0.0, 0.0, -1.0]), np.array([0.0, 0.0, 1.0])
    try:
        for g in cast_hidden:
            model.geom_group[g] = 5
        for i in range(N):
            for j in range(N):
                x, z = (i + 0.5) * CELL, (j + 0.5) * CELL
                top = mujoco.mj_ray(model, data, np.array([x, z, 12.0]), down, groups, 1, -1,
                                    geom)
                hit = int(geom[0])
                top_h = 12.0 - top if top >= 0 else 0.0
                height[i, j] = top_h
                if top_h > 0.3:
                    # Headroom under it? A ray up from the floor meets its underside; from
                    # inside a solid it leaves through the top face instead.
                    ceiling = mujoco.mj_ray(model, data, np.array([x, z, 0.02]), up, groups, 1,
                                            -1, geom)
                    if ceiling >= HEADROOM:
                        # From inside a solid the ray leaves through its far face; a ray back
                        # down from just below that point then meets a solid again (its
                        # underside), where under an overhead one it meets nothing.
                        back = mujoco.mj_ray(model, data, np.array([x, z, ceiling - 0.03]),
                                             down, groups, 1, -1, geom)
                        if back < 0:
                            height[i, j], hit = 0.0, -1
                ramp[i, j] = hit >= 0 and model.geom_type[hit] == mujoco.mjtGeom.mjGEOM_MESH
    finally:
        model.geom_group[:] = saved
    _thin_walls(model, data, hidden, height)
    return height, ramp


THIN = 0.3
"""Boxes thinner than this (m) can fall between the rays at the cells' centres."""


def _thin_walls(model, data, hidden: set[int], height: np.ndarray) -> None:
    """Raise the cells a thin standing wall passes through to its top (rays can miss it)."""
    import mujoco

    centres = (np.arange(N) + 0.5) * CELL
    px, py = np.meshgrid(centres, centres, indexing="ij")  # MuJoCo x, y = Unity x, z
    for g in range(model.ngeom):
        if g in hidden or model.geom_type[g] != mujoco.mjtGeom.mjGEOM_BOX:
            continue
        half = model.geom_size[g]
        if min(half[0], half[1]) >= THIN / 2 or model.geom_group[g] != 0:
            continue
        rot = data.geom_xmat[g].reshape(3, 3)
        cx, cy, cz = data.geom_xpos[g]
        extent_z = float(np.abs(rot[2]) @ half)
        top, bottom = cz + extent_z, cz - extent_z
        if bottom > 1.0 or top < 0.3:
            continue  # overhead, or low enough to be seen by the rays anyway
        dx, dy = px - cx, py - cy
        # the box's local x and y axes projected on the ground
        lx = dx * rot[0, 0] + dy * rot[1, 0]
        ly = dx * rot[0, 1] + dy * rot[1, 1]
        pad = CELL / 2
        inside = (np.abs(lx) <= half[0] + pad) & (np.abs(ly) <= half[1] + pad)
        if half[0] >= half[1]:  # pad only across the wall, not past its ends
            inside &= np.abs(lx) <= half[0]
        else:
            inside &= np.abs(ly) <= half[1]
        height[inside] = np.maximum(height[inside], top)


