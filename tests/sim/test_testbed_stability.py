"""With no agent input, every arena of the testbed stays still where gravity says it should.

Walls and ramps are rigid bodies under gravity (docs/animal-ai-facts.md §4), so a structure
that AAI would leave standing must not jitter, creep or walk in the simulator, while what
gravity should move (a rail on pillars of unequal height, an overhang) does. Which objects
should stay still is read from the arena's geometry (``tests.sim.support``); each must drift
less than 1 cm and turn less than 0.5 degrees over 5,000 physics steps (100 s, the longest
episode of the testbed: t = 1000 is 5,000 physics steps), measured from the moment spawning
settled (AAI spawns everything 1 cm above its support).
"""

from __future__ import annotations

import math
import os
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from llm_aai.arena.placement import place_arena
from llm_aai.arena.yaml_io import load_config
from llm_aai.sim import Simulator
from tests.sim.support import expected_still

SETTLE = 25
"""Physics steps (0.5 s) before the reference pose: the 1-2 cm spawning drop is over."""
STEPS = 5000
MAX_DRIFT = 0.01
MAX_TURN_DEG = 0.5


def drift(path: Path, seed: int = 0, steps: int = STEPS) -> list[str]:
    """The expected-still objects of one arena that moved, each with how far (empty: none)."""
    rng = np.random.default_rng(seed)
    placed = place_arena(load_config(path).arena(), rng)
    still = expected_still(placed)
    if not still:
        return []
    sim = Simulator(render=False)
    sim.load(placed, rng)
    sim._agent.command(0, 0)  # no agent input; physics only, outside the episode's rules
    model, data = sim._model, sim._data
    bodies = {index: model.body(f"body{index}").id for index in still}
    for _ in range(SETTLE):
        sim._physics_step()
    start = {i: (data.xpos[b].copy(), data.xquat[b].copy()) for i, b in bodies.items()}
    for _ in range(steps):
        sim._physics_step()
    moved = []
    for index, body in bodies.items():
        position, quat = start[index]
        distance = float(np.linalg.norm(data.xpos[body] - position))
        dot = min(1.0, abs(float(np.dot(quat, data.xquat[body]))))
        turn = math.degrees(2.0 * math.acos(dot))
        if distance >= MAX_DRIFT or turn >= MAX_TURN_DEG:
            moved.append(f"{path.stem}: {still[index]} moved {distance * 100:.1f} cm, "
                         f"turned {turn:.2f} deg")
    return moved


@pytest.mark.slow
def test_every_testbed_arena_stands_still_where_gravity_leaves_it(testbed_dir):
    files = sorted(testbed_dir.glob("*.yaml"))
    assert len(files) == 900
    start = time.perf_counter()
    with ProcessPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        moved = [line for lines in pool.map(drift, files, chunksize=8) for line in lines]
    print(f"stability over {len(files)} arenas: {time.perf_counter() - start:.0f} s")
    assert not moved, "\n".join(moved)
