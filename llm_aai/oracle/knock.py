"""Shoves aimed at a ball out of reach: drive a pushable block into it and knock it down.

A ball resting on a pillar or a wall above the agent's reach (children tasks 05-15-01,
10-21-01) comes down only if something hits it; a pushable block as tall as the ball's
underside can. This makes, for the oracle's search (``llm_aai.oracle.search``), a ``Push``
(``llm_aai.oracle.tools``) for each such ball and each block: start behind the block on the
line through the ball, face along it, and run the block into the ball. Its heading is one the
agent can face exactly (it turns in steps of 6 degrees from where it faces now), so the run
does not drift off the line; the search replans from wherever the block ends, so a block
that first has to come down from a platform gets a second shove from the floor.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from llm_aai.oracle.navigation import (
    AGENT_RADIUS,
    UNREACHABLE,
    Goal,
    NavMap,
    agent_pose,
    live_goals,
)
from llm_aai.oracle.tools import Push, block_footprints

TURN_STEP = 6.0
"""Degrees the agent turns per AAI step."""
RUN_UP = 0.6
"""Metres between the agent and the block when the shove starts."""
OUT_OF_REACH = 0.6
"""How far (m) a ball's underside may be above the surface under it and still be touched."""
MAX_STEPS = 40
"""Longest shove (AAI steps)."""
CLEAR = AGENT_RADIUS + 0.3
"""How far (m) the walk to a shove's start keeps from the block (the map ignores blocks, as
they can be pushed; walking into this one would shove it off the line)."""


@dataclass(frozen=True)
class Knock(Push):
    """A ``Push`` whose walk to its start goes round the block it will shove.

    Its ``avoid`` is a disc round the block (centre, its footprint's half width and
    ``CLEAR``). The block is wide and the ball a metre across, so the start is reached more
    loosely than a corner shove's (``arrive``), and the walk round the block may take longer
    (``walk``).
    """

    arrive: float = 0.5
    walk: int = 300


def out_of_reach(nav: NavMap, ball: Goal) -> bool:
    """Whether a ball rests too high above the surface under it for the agent to touch."""
    bx, by, bz = ball.position
    return by - ball.radius > nav.height[nav.cell(bx, bz)] + OUT_OF_REACH


def block_gap(sim, ball: Goal) -> float | None:
    """Metres from the nearest pushable block's centre to ``ball`` (None: no blocks).

    The search scores a state with a ball out of reach by it: a shove that brings a block
    nearer the ball is progress, however far the agent ends from it.
    """
    bx, _, bz = ball.position
    gaps = [math.dist(((low[0] + high[0]) / 2, (low[1] + high[1]) / 2), (bx, bz))
            for low, high in block_footprints(sim)]
    return min(gaps) if gaps else None


def knocks(sim, nav: NavMap) -> list[Knock]:
    """Aimed shoves of each pushable block into each good ball the agent cannot touch.

    A ball counts as out of reach when its underside is higher above the surface under it
    than the agent can touch (``OUT_OF_REACH``). Shoves whose start the map cannot reach are
    left out; the nearest block to each ball comes first.
    """
    x0, _, z0, yaw = agent_pose(sim)
    raised = [ball for ball in live_goals(sim)[0] if out_of_reach(nav, ball)]
    shoves: list[tuple[float, Knock]] = []
    for ball in raised:
        bx, _, bz = ball.position
        for low, high in block_footprints(sim):
            cx, cz = (low[0] + high[0]) / 2, (low[1] + high[1]) / 2
            gap = math.dist((cx, cz), (bx, bz))
            if gap < 1e-6:
                continue
            ideal = math.degrees(math.atan2(bx - cx, bz - cz))
            heading = yaw + TURN_STEP * round(((ideal - yaw + 180.0) % 360.0 - 180.0) / TURN_STEP)
            ux, uz = math.sin(math.radians(heading)), math.cos(math.radians(heading))
            half = max(high[0] - low[0], high[1] - low[1]) / 2
            back = gap + half + AGENT_RADIUS + RUN_UP
            px, pz = bx - ux * back, bz - uz * back
            avoid = ((cx, cz, half + CLEAR),)
            start = Goal(-1, "behind a block, in line with a ball out of reach", 0.0, False,
                         (px, 0.5, pz), AGENT_RADIUS)
            if nav.distance(nav.field(start, avoid), x0, z0) == UNREACHABLE:
                continue  # (the walk there may be one way: drops from a platform)
            steps = min(MAX_STEPS, 6 + int(gap / 0.8))
            shoves.append((gap, Knock(start, heading % 360.0, steps, avoid=avoid)))
    shoves.sort(key=lambda item: item[0])
    return [push for _, push in shoves]
