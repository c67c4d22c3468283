"""What the oracle's search tries beyond walking to a ball: waiting for it, shoving a block.

Two kinds of candidate for ``llm_aai.oracle.search``, each a first stage its controller plays
before it heads for the balls: a ``Meeting`` (walk to a spot on a moving ball's predicted
path and wait there for it) and a ``Push`` (walk to a corner of a pushable block, turn along
its edge and shove it, so that it knocks or sweeps a ball where the agent can reach it).
The simulator is the model: a ball's path is predicted by simulating the world with the
agent standing still, and a block's footprint is read from its geometry now.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from llm_aai.oracle.navigation import (
    AGENT_RADIUS,
    UNREACHABLE,
    Goal,
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
PUSH_STEPS = (10,)
"""Forward steps of each shove tried (about 5 m of push at walking speed)."""
PUSH_BACK = 20
"""Steps it backs off after a shove, to clear the block before heading on."""
PUSH_SETTLE = 40
"""Steps it then waits (turning in place under the script protocol) for what the shove set
rolling to come to rest, before it heads for a ball."""
PUSH_ARRIVE = 0.2
"""How close to a push's start the agent must get (m): an arm is about 1 m thick."""
PUSH_WALK = 150
"""Steps it may take to reach a push's start before that candidate is given up."""
PUSH_STANDOFFS = (0.6, 1.2)
"""Metres beyond a block's corner, along the push, where the agent starts (its radius and a
short or a longer run-up: how hard it strikes changes where the block and a ball end up)."""
PUSH_INSETS = (0.8, 0.3)
"""Metres the push line lies inside the block's edge: the agent strikes near the corner, so
the block turns as well as slides (an arm of a U or L block is about 1 m thick)."""


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
        start: where the agent stands to push, as a goal to walk to (Unity coordinates).
        heading: the Unity yaw (degrees) it pushes along.
        steps: forward steps of the shove (then it backs off ``PUSH_BACK`` steps).
    """

    start: Goal
    heading: float
    steps: int


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
    """Shoves of each pushable block at its corners, along either edge, that the map reaches.

    A block's footprint is the box around its geometry now (Unity x, z); each corner gives
    pushes along each edge that meets there, struck inside the edge so the block turns as
    well as slides (a U or L block's arm can then sweep a ball along). Corners nearer a good
    ball come first, and at most ``PUSHES`` shoves are returned.
    """
    x0, _, z0, _ = agent_pose(sim)
    here = Goal(-1, "agent", 0.0, False, (x0, 0.5, z0), AGENT_RADIUS)
    from_agent = nav.field(here)
    balls = [(g.position[0], g.position[2]) for g in live_goals(sim)[0]]
    corners = [(cx, cz, sx, sz) for low, high in _block_footprints(sim)
               for cx, cz, sx, sz in ((low[0], low[1], -1, -1), (low[0], high[1], -1, 1),
                                      (high[0], low[1], 1, -1), (high[0], high[1], 1, 1))]
    # corners near a ball first: the shove most likely to move it
    corners.sort(key=lambda c: min((math.dist(c[:2], b) for b in balls), default=0.0))
    pushes: list[Push] = []
    for cx, cz, sx, sz in corners:
            # along x (towards the block: heading east if the corner is on its west side),
            # then along z
            starts = [((cx + sx * off, cz - sz * inset), 90.0 if sx < 0 else 270.0)
                      for inset in PUSH_INSETS for off in PUSH_STANDOFFS]
            starts += [((cx - sx * inset, cz + sz * off), 0.0 if sz < 0 else 180.0)
                       for inset in PUSH_INSETS for off in PUSH_STANDOFFS]
            for (px, pz), heading in starts:
                if nav.distance(from_agent, px, pz) == UNREACHABLE:
                    continue
                start = Goal(-1, "a block's corner", 0.0, False, (px, 0.5, pz), AGENT_RADIUS)
                pushes += [Push(start, heading, steps) for steps in PUSH_STEPS]
    return pushes[:PUSHES]


def _block_footprints(sim) -> list[tuple[tuple[float, float], tuple[float, float]]]:
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
