"""What the oracle's search tries beyond walking to a ball: waiting for it, shoving a block.

Two kinds of candidate for ``llm_aai.oracle.search``, each a first stage its controller plays
before it heads for the balls: a ``Meeting`` (walk to a spot on a moving ball's predicted
path and wait there for it) and a ``Push`` (walk round a pushable block to a run-up point on
a line through one of its corners, creep up to it, turn along the line and run into the
block, so that it knocks or sweeps a ball where the agent can reach it). The simulator is the
model: a ball's path is predicted by simulating the world with the agent standing still, a
block's footprint is read from its geometry now, and which pushes come first is a rough
rigid-slab estimate of how each would carry a stranded ball towards walkable ground.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field

import numpy as np

from llm_aai.oracle.navigation import (
    AGENT_RADIUS,
    CELL,
    UNREACHABLE,
    Goal,
    N,
    NavMap,
    agent_pose,
    live_goals,
)
from llm_aai.sim.coords import to_unity

STILL = (0, 0)
"""The AAI action that leaves the agent where it is."""
PUSHABLE_MASS = 50.0
"""kg: free bodies lighter than this are blocks the agent can push (as the walking map has it)."""
MEET_LINGER = 75
"""Steps a meeting waits past the ball's predicted arrival."""
MEETINGS = 6
"""Intercept candidates tried per search: spots on moving balls' predicted paths."""
MEET_RADIUS = 0.4
"""How close to a meeting point the agent stops to wait (m)."""
MEET_SPEED = 0.5
"""Metres per AAI step the agent is assumed to cover towards a meeting point (it reaches
about 0.8 at full speed; the margin pays for turning and starting)."""
MEET_SAMPLE = 5
"""Steps between samples of a ball's predicted path."""
MOVING = 0.3
"""m/s: a ball slower than this everywhere is not worth predicting."""
PUSHES = 16
"""Most shoves tried per search (the corners nearest a ball): each costs a walk and a
rollout, taken from the random macro-actions' share of the budget."""
PUSH_STEPS = (12, 16)
"""Forward steps of each run-up and shove tried (the agent covers about 1.4 m in its first
three steps from rest, then about 0.55 m a step)."""
SHOVE_LOOKAHEAD = 0.5
SHOVE_SLIDE = 4.0
"""A shove stops pressing forward once a death zone or red ball lies within ``SHOVE_LOOKAHEAD``
metres plus ``SHOVE_SLIDE`` times its speed (m per step) ahead: the agent follows the block
and slides on after it lets go."""
PUSH_BACK = 20
"""Steps it backs off after a shove, to clear the block before heading on."""
PUSH_SETTLE = 40
"""Steps it then waits (turning in place under the script protocol) for what the shove set
rolling to come to rest, before it heads for a ball."""
PUSH_ARRIVE = 0.2
"""How close to a push's run-up point the agent must get (m): an arm is about 1 m thick."""
PUSH_CREEP = 2.0
"""Metres from a push's run-up point within which the agent creeps up to it."""
CREEP_SPEED = 0.06
"""Metres per AAI step below which a creeping agent takes its next forward step (one step
from rest carries it about 0.26 m; at full speed it slides on for metres)."""
PUSH_WALK = 150
"""Steps it may take to reach a push's run-up point before that candidate is given up."""
PUSH_STANDOFFS = (1.0, 1.8)
"""Metres beyond a block's corner, along the push, where the agent's run-up starts: clear of
the block (its radius and a margin), and a short or a longer run (how hard it strikes
changes where the block and a ball end up)."""
PUSH_INSETS = (0.8, 0.3)
"""Metres the push line lies inside the block's edge: the agent strikes near the corner, so
the block turns as well as slides (an arm of a U or L block is about 1 m thick)."""
BLOCK_MARGIN = 0.3
"""Metres beyond the agent's radius the walk to a run-up point keeps off the block."""
ESCAPE_STEP = 0.25
"""Metres between the points tested along the way a push would carry a stranded ball."""


@dataclass(frozen=True)
class Meeting:
    """Where and until when to wait for a moving ball (an intercept candidate).

    Attributes:
        point: a spot of the ball's predicted path, as a goal to walk to (Unity coordinates).
        until: the step of the rollout after which the controller stops waiting there.
        ball: the ball it waits for, for the plan's thought.
    """

    point: Goal
    until: int
    ball: Goal


@dataclass(frozen=True)
class Push:
    """A shove of a pushable block (a candidate for tasks that need a tool).

    Attributes:
        start: where the agent starts its run-up, as a goal to walk to (Unity coordinates).
        heading: the Unity yaw (degrees) it pushes along.
        steps: forward steps of the run-up and shove (then it backs off ``PUSH_BACK``).
        detour: the walking map the agent reaches ``start`` by, with the block on it.
        avoid: discs (centre x, centre z, radius) the walk to ``start`` keeps out of, for
            ``NavMap.field`` (a shove aimed from a block's far side walks round it).
        arrive: how near ``start`` (m) counts as there.
        walk: steps the walk to ``start`` may take before the push is given up.
    """

    start: Goal
    heading: float
    steps: int
    detour: NavMap | None = field(default=None, compare=False, repr=False)
    avoid: tuple[tuple[float, float, float], ...] = ()
    arrive: float = PUSH_ARRIVE
    walk: int = PUSH_WALK


def meetings(sim, nav: NavMap, budget, horizon: int) -> list[Meeting]:
    """Spots where a moving good ball will pass that the agent can reach before it does.

    The balls' paths are predicted by simulating the world with the agent standing still
    (the simulator is the model; its state is left for the caller to restore). A spot
    counts if the walking map reaches it and the walk, at ``MEET_SPEED``, ends before the
    ball gets there. Up to ``MEETINGS`` of them, spread over the horizon, earliest first.
    """
    start = {g.geom: g for g in live_goals(sim)[0]}
    if not any(_speed(sim, geom) > MOVING for geom in start):
        return []  # nothing rolls: the prediction would cost a horizon for nothing
    x0, _, z0, _ = agent_pose(sim)
    here = Goal(-1, "agent", 0.0, False, (x0, 0.5, z0), AGENT_RADIUS)
    from_agent = nav.field(here)  # distances to the agent: the walk is symmetric enough
    feasible: list[Meeting] = []
    for step in range(1, horizon + 1):
        if sim.done or not budget.take():
            break
        sim.step(*STILL)
        if step % MEET_SAMPLE:
            continue
        for ball in live_goals(sim)[0]:
            first = start.get(ball.geom)
            bx, by, bz = ball.position
            if first is None or math.dist((bx, bz), first.position[::2]) < 1.0:
                continue  # a ball that does not move is the controller's business
            walk = nav.distance(from_agent, bx, bz)
            if walk == UNREACHABLE or walk / MEET_SPEED > step:
                continue
            point = Goal(-1, "a spot on its path", 0.0, False, (bx, by, bz), ball.radius)
            feasible.append(Meeting(point, step + MEET_LINGER, first))
    if len(feasible) <= MEETINGS:
        return feasible
    stride = (len(feasible) - 1) / (MEETINGS - 1)
    return [feasible[round(k * stride)] for k in range(MEETINGS)]


def pushes(sim, nav: NavMap) -> list[Push]:
    """Shoves of pushable blocks at their extremities that may free a ball, most promising first.

    A block's footprint is the box around its geometry now (Unity x, z); each corner gives
    pushes along each edge that meets there, struck inside the edge so the block turns as
    well as slides (a U or L block's arm can then sweep a ball along). The agent walks to a
    run-up point on the push's line by a route that keeps off the block (the walking map
    does not see pushable blocks, and brushing one on the way moves it), then runs straight
    along the line into the block. Pushes are ranked by how they would move the block where
    a stranded ball lies (one the agent cannot walk to: in a death zone, on a platform),
    towards the nearest ground the agent can reach (``_sweep``); with no stranded ball,
    corners nearer a ball come first. At most ``PUSHES`` are returned.
    """
    footprints = block_footprints(sim)
    if not footprints:
        return []
    x0, _, z0, _ = agent_pose(sim)
    good = live_goals(sim)[0]
    balls = [(g.position[0], g.position[2]) for g in good]
    stranded, reach = _stranded(nav, good, (x0, z0))
    ranked: list[tuple[float, float, int, Push]] = []
    for low, high in footprints:
        detour = _keeping_off(nav, low, high)
        walkable = _reachable(detour, (x0, z0))
        for cx, cz, sx, sz in ((low[0], low[1], -1, -1), (low[0], high[1], -1, 1),
                               (high[0], low[1], 1, -1), (high[0], high[1], 1, 1)):
            near = min((math.dist((cx, cz), b) for b in balls), default=0.0)
            # along x (heading east if the corner is on the block's west side), then along z
            lines = [((cx + sx * off, cz - sz * inset), (-sx, 0.0), (cx, cz - sz * inset))
                     for inset in PUSH_INSETS for off in PUSH_STANDOFFS]
            lines += [((cx - sx * inset, cz + sz * off), (0.0, -sz), (cx - sx * inset, cz))
                      for inset in PUSH_INSETS for off in PUSH_STANDOFFS]
            for (px, pz), direction, contact in lines:
                # the walk from the agent to the start, searched forwards (a drop from a
                # platform is one-way, so distances to the agent would not do); the start
                # may lie just within the block's margin, so a walkable neighbour will do
                i, j = NavMap.cell(px, pz)
                if not walkable[max(i - 1, 0):i + 2, max(j - 1, 0):j + 2].any():
                    continue
                start = Goal(-1, "a block's corner", 0.0, False, (px, 0.5, pz), AGENT_RADIUS)
                heading = math.degrees(math.atan2(*direction)) % 360.0
                promise = max((_sweep(low, high, contact, direction, ball, reach)
                               for ball in stranded), default=0.0)
                for steps in PUSH_STEPS:
                    ranked.append((-promise, near, len(ranked),
                                   Push(start, heading, steps, detour)))
    ranked.sort(key=lambda item: item[:3])
    return [item[3] for item in ranked[:PUSHES]]


def _stranded(nav: NavMap, good: list[Goal], agent: tuple[float, float]
              ) -> tuple[list[tuple[float, float]], np.ndarray]:
    """The good balls the agent cannot walk to, (x, z), and the cells it can walk to."""
    reach = _reachable(nav, agent)
    found = [(g.position[0], g.position[2]) for g in good
             if nav.distance(nav.field(g), *agent) == UNREACHABLE]
    return found, reach


def _reachable(nav: NavMap, agent: tuple[float, float]) -> np.ndarray:
    """Cells the agent can walk to from where it stands (a search forwards over the map)."""
    reach = np.zeros((N, N), dtype=bool)
    start = nav.cell(*agent)
    reach[start] = True
    frontier = [start]
    while frontier:
        i, j = frontier.pop()
        for di in (-1, 0, 1):
            for dj in (-1, 0, 1):
                b = (i + di, j + dj)
                if (0 <= b[0] < N and 0 <= b[1] < N and not reach[b]
                        and nav.can_step((i, j), b)):
                    reach[b] = True
                    frontier.append(b)
    return reach


def _sweep(low, high, contact, direction, ball, reach: np.ndarray) -> float:
    """How well a push would carry a stranded ball to ground the agent reaches (a rank only).

    The block is taken as a uniform slab over its footprint, struck at ``contact`` along
    ``direction``: per unit of impulse it slides along ``direction`` and turns by the
    impulse's moment over its moment of inertia (both per unit mass). Its point nearest the
    ball (the ball itself if it lies within the footprint, as in a U block's opening) moves
    with the sum; that must head for the ball, and the ball, carried that way, should soon
    come to reachable ground. Balls far from the block count less.
    """
    cx, cz = (low[0] + high[0]) / 2, (low[1] + high[1]) / 2
    width, length = high[0] - low[0], high[1] - low[1]
    inertia = (width * width + length * length) / 12.0
    rx, rz = contact[0] - cx, contact[1] - cz
    spin = (rx * direction[1] - rz * direction[0]) / inertia
    nx = min(max(ball[0], low[0]), high[0])
    nz = min(max(ball[1], low[1]), high[1])
    vx = direction[0] - spin * (nz - cz)
    vz = direction[1] + spin * (nx - cx)
    speed = math.hypot(vx, vz)
    gap = math.dist((nx, nz), ball)
    if speed < 1e-9:
        return 0.0
    if gap > 0.0:
        speed = (vx * (ball[0] - nx) + vz * (ball[1] - nz)) / gap
        if speed <= 0.0:
            return 0.0  # the block moves away from the ball
    escape = _escape(ball, (vx / math.hypot(vx, vz), vz / math.hypot(vx, vz)), reach)
    return speed / ((1.0 + gap) * (1.0 + escape))


def _escape(ball: tuple[float, float], way: tuple[float, float], reach: np.ndarray) -> float:
    """Metres from ``ball`` along the unit vector ``way`` to a cell the agent reaches.

    Infinite if the line leaves the arena first.
    """
    for k in range(1, int(40.0 / ESCAPE_STEP)):
        x, z = ball[0] + way[0] * k * ESCAPE_STEP, ball[1] + way[1] * k * ESCAPE_STEP
        if not (0.0 <= x < N * CELL and 0.0 <= z < N * CELL):
            break
        if reach[NavMap.cell(x, z)]:
            return k * ESCAPE_STEP
    return math.inf


def _keeping_off(nav: NavMap, low: tuple[float, float], high: tuple[float, float]) -> NavMap:
    """``nav`` with a block's footprint, widened by the agent's radius and a margin, blocked."""
    detour = copy.copy(nav)
    centres = (np.arange(N) + 0.5) * CELL
    reach = AGENT_RADIUS + BLOCK_MARGIN
    inside_x = (centres > low[0] - reach) & (centres < high[0] + reach)
    inside_z = (centres > low[1] - reach) & (centres < high[1] + reach)
    detour.blocked = nav.blocked | (inside_x[:, None] & inside_z[None, :])
    detour._fields = {}
    return detour


def block_footprints(sim) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    """((min x, min z), (max x, max z)) of each pushable block (light free body, not a ball)."""
    import mujoco

    model, data = sim._model, sim._data
    balls = {goal.body for goal in sim._goals.values()}
    corners = np.array([(i, j, k) for i in (-1, 1) for j in (-1, 1) for k in (-1, 1)], float)
    boxes: dict[int, list] = {}
    for geom in range(model.ngeom):
        body = int(model.geom_bodyid[geom])
        joint = model.body_jntadr[body]
        if (body in balls or joint < 0 or model.jnt_type[joint] != mujoco.mjtJoint.mjJNT_FREE
                or model.body_mass[body] >= PUSHABLE_MASS
                or model.geom_type[geom] != mujoco.mjtGeom.mjGEOM_BOX):
            continue
        rotation = data.geom_xmat[geom].reshape(3, 3)
        points = data.geom_xpos[geom] + (corners * model.geom_size[geom]) @ rotation.T
        boxes.setdefault(body, []).extend(to_unity(point) for point in points)
    footprints = []
    for points in boxes.values():
        xs, zs = [p[0] for p in points], [p[2] for p in points]
        footprints.append(((min(xs), min(zs)), (max(xs), max(zs))))
    return footprints


def _speed(sim, geom: int) -> float:
    """A ball's speed now (m/s), read from the simulator's state (privileged)."""
    dof = sim._goals[geom].dof
    return float(math.hypot(*sim._data.qvel[dof : dof + 3]))
