"""The simulator tests' fixture: a physics-only simulator (arenas: ``tests.helpers.arenas``)."""

from __future__ import annotations

import numpy as np
import pytest

from llm_aai.sim import Simulator


@pytest.fixture
def physics_sim():
    """A physics-only simulator factory: ``physics_sim(placed) -> Simulator``."""

    def make(placed, seed=0):
        sim = Simulator(render=False)
        sim.load(placed, np.random.default_rng(seed))
        return sim

    return make
