"""Helpers to build small hand-made arenas for simulator tests."""

from __future__ import annotations

import numpy as np
import pytest

from llm_aai.arena.model import Arena
from llm_aai.arena.objects import lookup
from llm_aai.arena.placement import PlacedArena, PlacedObject
from llm_aai.sim import Simulator


def obj(name, position, size, yaw=0.0, color=None, lift=0.01):
    """A placed object with its bottom at y + lift (what the placer produces)."""
    spec = lookup(name)
    x, y, z = position
    if name in ("DeathZone", "HotZone"):
        bottom = -0.15 - size[1] / 2
    else:
        bottom = y + lift
    return PlacedObject(spec, (x, bottom, z), tuple(size), yaw + spec.yaw_offset,
                        color or spec.color, 0, 0)


def arena(*objects, agent=(20.0, 0.0, 20.0), yaw=0.0, t=0, blackouts=()):
    agent_obj = PlacedObject(lookup("Agent"), (agent[0], agent[1] + 0.01, agent[2]),
                             (1.0, 1.0, 1.0), yaw, (0.5, 0.5, 0.5), 0, 0)
    return PlacedArena(Arena(time_limit=t, blackouts=tuple(blackouts)), agent_obj,
                       tuple(objects))


@pytest.fixture
def physics_sim():
    """A physics-only simulator factory: ``physics_sim(placed) -> Simulator``."""

    def make(placed, seed=0):
        sim = Simulator(render=False)
        sim.load(placed, np.random.default_rng(seed))
        return sim

    return make
