"""Leaps for the oracle's walking map: runs off an edge that fly over what a walk cannot cross.

The walking map (``llm_aai.oracle.navigation``) joins neighbouring cells the agent can roll
between. Some ways need the agent in the air: rolling off a platform's end over the strip of
a death zone that starts at its foot (standing on that strip would be fatal, flying over it is
not), or running up a ramp fast enough to fly across a gap onto a platform as high as the
ramp's top. A ``Leap`` is such a way, from the cell where a straight run-up starts, over the
edge, to the cell it lands on.

Whether a leap works is worked out from Animal-AI's movement model (docs/animal-ai-facts.md;
``llm_aai.sim.agent_physics`` holds its constants): the speed a run-up from rest reaches, and
the flight off the edge under gravity with the same linear damping. A leap is kept only if the
flight clears every cell it passes over and lands on a cell that is safe to stand on, and every
cell it could land on, from the flight at nine tenths of the modelled speed to the flight at
full speed (the agent may arrive faster), is safe too. It takes the shortest run-up that works.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from llm_aai.sim.agent_physics import DAMPING, FRICTION, THRUST_DV

DT = 0.02
"""Seconds per physics step."""
GRAVITY = 9.81
RADIUS = 0.5
"""The agent's radius (m)."""
DROP = 0.3
"""Least drop (m) from an edge to what lies past it for the agent to fly off it."""
RUN_UPS = (2, 4, 6, 10, 16, 24)
"""Run-up lengths tried, in cells along the leap's direction (the shortest that works)."""
MAX_FLIGHT = 16.0
"""Longest flight considered (m): a launch off a 1.5 m ramp at full speed lands about 13 m on."""
SPEED_MARGIN = 0.9
"""The flight must also land safely at this share of the run-up's modelled speed (the model's
error, a start off the cell's centre)."""
TOP_SPEED = (THRUST_DV - FRICTION * GRAVITY * DT) * DAMPING / (1.0 - DAMPING)
"""Steady running speed (m/s): where thrust balances damping and friction (about 26.7)."""
CLEARANCE = 0.05
"""How far above a cell's surface the agent's underside must pass while flying over it (m)."""
DIRECTIONS = ((1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1))


@dataclass(frozen=True)
class Leap:
    """A run-up, a flight off an edge and a landing, on the map's grid.

    Attributes:
        start: the cell where the straight run-up begins (the agent stops there and turns).
        launch: the last cell on the surface before the edge.
        land: the cell it lands on.
        length: metres from ``start`` to ``land`` along the leap.
    """

    start: tuple[int, int]
    launch: tuple[int, int]
    land: tuple[int, int]
    length: float


def find_leaps(height: np.ndarray, blocked: np.ndarray, ramp: np.ndarray, can_step,
               cell: float) -> list[Leap]:
    """Every leap the map needs (see the module doc).

    Only edges where a walk falls short are tried: a drop of at least ``DROP`` onto a cell
    that is unsafe to stand on (a death zone at the foot of a platform), or the high end of a
    ramp whose run goes on past a drop (a launch). A leap that lands where a walk could go
    anyway is left out (it would add nothing but risk).

    Args:
        height: surface height per cell.
        blocked: cells the agent must not stand on.
        ramp: cells on a ramp.
        can_step: ``can_step(a, b)``, whether the agent can roll from cell a to neighbour b.
        cell: the cell size (m).
    """
    n = height.shape[0]
    leaps: list[Leap] = []
    for di, dj in DIRECTIONS:
        step = cell * math.hypot(di, dj)
        shifted_h = np.full_like(height, np.inf)
        shifted_b = np.zeros_like(blocked)
        src = (slice(max(-di, 0), n - max(di, 0)), slice(max(-dj, 0), n - max(dj, 0)))
        dst = (slice(max(di, 0), n - max(-di, 0)), slice(max(dj, 0), n - max(-dj, 0)))
        shifted_h[src] = height[dst]
        shifted_b[src] = blocked[dst]
        drop = height - shifted_h
        over_danger = shifted_b & (drop >= DROP)
        launch = ramp & (drop >= DROP)
        for i, j in np.argwhere(~blocked & (over_danger | launch)):
            leap = _leap_from(height, blocked, can_step, (int(i), int(j)), (di, dj), step)
            if leap is not None:
                leaps.append(leap)
    return leaps


def _leap_from(height, blocked, can_step, a: tuple[int, int], d: tuple[int, int],
               step: float) -> Leap | None:
    """The leap off ``a`` along ``d`` with the shortest run-up that works, if any."""
    n = height.shape[0]
    ahead = []
    for k in range(1, int(MAX_FLIGHT / step) + 1):
        c = (a[0] + k * d[0], a[1] + k * d[1])
        if not (0 <= c[0] < n and 0 <= c[1] < n):
            break
        ahead.append(c)
    if len(ahead) < 2:
        return None
    lane = [a]
    for r in range(1, max(RUN_UPS) + 1):
        back = (a[0] - r * d[0], a[1] - r * d[1])
        if not (0 <= back[0] < n and 0 <= back[1] < n) or blocked[back]:
            break
        if not can_step(back, lane[-1]):
            break
        lane.append(back)
    launch_h = float(height[a])
    tops = np.array([float(height[c]) for c in ahead]) - launch_h
    unsafe = np.array([bool(blocked[c]) for c in ahead])
    for run in RUN_UPS:
        if run >= len(lane):
            break
        profile = tuple(round(float(height[c]) - launch_h, 2) for c in reversed(lane[: run + 1]))
        speed, angle = _run_up(profile, step)
        if angle < 0.0 or speed <= 0.0:
            return None  # running downhill onto the edge: a walk's drop, not a launch
        landing = _landing(tops, unsafe, speed * SPEED_MARGIN, angle, step)
        if landing is None:
            continue
        farthest = _landing(tops, unsafe, TOP_SPEED, angle, step)
        if farthest is None or farthest < landing or unsafe[landing : farthest + 1].any():
            continue  # faster, it would come down somewhere unsafe
        flown = tops[:landing]
        if not unsafe[:landing].any() and not tops[landing] > flown.min() + DROP:
            continue  # nothing a walk could not do (no danger flown over, no gap climbed)
        return Leap(lane[run], a, ahead[landing], (run + landing + 1) * step)
    return None


@lru_cache(maxsize=4096)
def _run_up(profile: tuple[float, ...], step: float) -> tuple[float, float]:
    """(speed at the edge in m/s, climb angle in radians) after a run-up from rest.

    ``profile`` holds the surface heights of the lane's cells (relative to the launch cell,
    start to launch); the agent thrusts every physics step, as Animal-AI's does.
    """
    speed, travelled = 0.0, 0.0
    total = (len(profile) - 0.5) * step
    slope = 0.0
    while travelled < total:
        k = min(int(travelled / step + 0.5), len(profile) - 1)
        rise = profile[k] - profile[k - 1] if k > 0 else 0.0
        slope = math.atan2(rise, step)
        speed = (speed + THRUST_DV) * DAMPING
        speed -= (FRICTION * math.cos(slope) + math.sin(slope)) * GRAVITY * DT * DAMPING
        speed = max(speed, 0.0)
        if speed == 0.0:
            return 0.0, slope
        travelled += speed * math.cos(slope) * DT
    return speed, slope


def _landing(tops: np.ndarray, unsafe: np.ndarray, speed: float, angle: float,
             step: float) -> int | None:
    """Index of the cell ahead the flight lands on, or None if it cannot land safely.

    None if it meets a cell's face, comes down where it is unsafe to be, or flies past the
    cells looked at.

    Args:
        tops: the surface heights of the cells ahead, relative to the launch cell.
        unsafe: whether each cell ahead is unsafe to stand on.
        speed: speed at the edge (m/s).
        angle: climb angle at the edge (radians).
        step: metres between the cells' centres along the leap.
    """
    xs, ys = _flight(round(speed, 1), round(angle, 2))
    bounds = step * np.arange(len(tops) + 1)  # cell k spans bounds[k]..bounds[k + 1]
    y = np.interp(bounds, xs, ys, right=np.nan)
    # the flight is concave: over a cell it is lowest at one of the cell's two boundaries
    low = np.fmin(y[:-1], y[1:])
    margin = np.where(unsafe, CLEARANCE + 0.1, CLEARANCE)  # a zone's slab stands 0.1 m up
    down = np.flatnonzero(~(low > tops + margin))  # NaN (never got there) counts as down
    if len(down) == 0:
        return None
    k = int(down[0])
    if np.isnan(y[k]) or y[k] < tops[k] - 0.1 or unsafe[k]:
        return None  # flew past the cells looked at, met a face, or lands in danger
    # where the underside comes down to the surface; the body must be clear of the cell
    # behind (a death zone's edge reaches the agent's side within about 0.3 m)
    touch = float(np.interp(-(tops[k]), -ys[np.argmax(ys):], xs[np.argmax(ys):]))
    behind = int((touch - 0.3) // step)
    if 0 <= behind < k and unsafe[behind]:
        return None
    return k


@lru_cache(maxsize=1024)
def _flight(speed: float, angle: float) -> tuple[np.ndarray, np.ndarray]:
    """(horizontal distances, underside heights) of a flight off an edge, per physics step.

    Both relative to where the underside left the surface; it ends after a fall of 12 m.
    """
    vx, vy = speed * math.cos(angle), speed * math.sin(angle)
    x = y = 0.0
    points = [(0.0, 0.0)]
    while y > -12.0 and x < MAX_FLIGHT + 1.0:
        vy -= GRAVITY * DT
        vx, vy = vx * DAMPING, vy * DAMPING
        x, y = x + vx * DT, y + vy * DT
        points.append((x, y))
        if vx < 1e-3 and vy < -5.0:
            break
    xs, ys = np.array(points).T
    return xs, ys
