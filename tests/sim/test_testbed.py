"""Every official testbed arena builds and simulates (docs/animal-ai-facts.md §8)."""

import math

import numpy as np
import pytest

from llm_aai.arena.placement import place_arena
from llm_aai.arena.yaml_io import load_config
from llm_aai.sim import Simulator

STEPS = 300
RENDER_EVERY_NTH_ARENA = 30  # a rendered frame every 100 steps on a sample of arenas


@pytest.mark.slow
def test_all_testbed_arenas_build_and_run(testbed_dir):
    files = sorted(testbed_dir.glob("*.yaml"))
    assert len(files) == 900
    physics = Simulator(render=False)
    renderer = Simulator(128)
    ends: dict[str, int] = {}
    warned: dict[str, dict[str, int]] = {}
    for k, path in enumerate(files):
        rng = np.random.default_rng(k)
        placed = place_arena(load_config(path).arena(), rng)
        sim = renderer if k % RENDER_EVERY_NTH_ARENA == 0 else physics
        sim.load(placed, rng)
        for step, (move, turn) in enumerate(rng.integers(0, 3, size=(STEPS, 2)).tolist()):
            result = sim.step(move, turn)
            x, y, z = sim.state.position
            assert all(map(math.isfinite, (x, y, z))), path.name
            assert -0.6 < x < 40.6 and -0.6 < z < 40.6 and y > -0.5, (path.name, x, y, z)
            if sim is renderer and step % 100 == 0:
                frame = sim.observe()
                assert frame.shape == (128, 128, 3)
            if result.done:
                ends[result.end_reason] = ends.get(result.end_reason, 0) + 1
                break
        # step() raises SimulationUnstable on divergence; any other MuJoCo warning (contact
        # buffer full, bad inertia...) is also a silently degraded world: none allowed.
        if sim.physics_warnings:
            warned[path.name] = sim.physics_warnings
    renderer.close()
    assert warned == {}
    assert set(ends) <= {"good_goal", "bad_goal", "death_zone", "all_multis", "health_zero",
                         "time_limit"}
