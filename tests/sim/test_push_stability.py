"""Boxes and blocks hit at full speed stay stable: PhysX's 7 rad/s spin limit (issue #22).

Each case drove MuJoCo to divergence on main 4c41d0d (``SimulationUnstable`` within 20-40
steps; in a sweep of 243 such hits, 30 diverged): a long Cardbox2 plank struck on its edge
spun at 50 rad/s and sank through the floor, an L block and a box wedged between 10 t walls
did the same. The audit of the whole testbed recorded 29 such crashes. With Animal-AI's
``maxAngularVelocity`` (7 rad/s) none of the 243 diverges.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from llm_aai.sim.angular_limit import MAX_ANGULAR_SPEED
from tests.helpers.arenas import arena, obj

PLANK = [obj("Cardbox2", (20.0, 0.0, 20.0), (10, 0.5, 0.8)),  # 10-28's plank over a gap
         obj("WallTransparent", (20.0, 0.0, 22.0), (5, 2, 2))]
L_BLOCK = [obj("LObject", (35.0, 0.0, 20.0), (3, 1, 8), yaw=90.0)]
BOX_IN_GAP = [obj("Wall", (20.0, 0.0, 9.5), (10, 3, 19)),  # 03-24's box across a 2 m gap
              obj("Wall", (20.0, 0.0, 30.5), (10, 3, 19)),
              obj("Cardbox2", (14.0, 0.0, 20.0), (1, 1, 5))]


@pytest.mark.parametrize(("objects", "pushed", "target", "heading", "offset"), [
    (PLANK, 0, (20.0, 20.0), 60, 0.0),
    (PLANK, 0, (20.0, 20.0), 300, 0.0),
    (L_BLOCK, 0, (35.0, 20.0), 90, 0.5),
    (BOX_IN_GAP, 2, (14.0, 20.0), 90, -0.5),
], ids=["plank-60", "plank-300", "l-block", "box-in-gap"])
def test_a_body_hit_at_full_speed_stays_stable(physics_sim, objects, pushed, target, heading,
                                                offset):
    """The agent starts 12 m away, runs at it (top speed before the hit) and keeps pushing."""
    a = math.radians(heading)
    tx, tz = target
    start = (tx - 12 * math.sin(a) + offset * math.cos(a), 0.0,
             tz - 12 * math.cos(a) - offset * math.sin(a))
    sim = physics_sim(arena(*objects, agent=start, yaw=float(heading)))
    body = sim._model.body(f"body{pushed}").id
    first = int(sim._model.jnt_dofadr[sim._model.body_jntadr[body]])
    spins, lowest = [], math.inf
    for k in range(150):
        sim.step(1, 0 if k < 100 else (k // 10) % 3)  # then wriggle against it
        spins.append(float(np.linalg.norm(sim._data.qvel[first + 3 : first + 6])))
        lowest = min(lowest, float(sim._data.xpos[body][2]))
    assert sim.physics_warnings == {}
    assert max(spins) <= MAX_ANGULAR_SPEED + 1e-9
    assert max(spins) > 0.5  # it was hit hard enough to turn
    assert lowest > 0.0  # its centre never went below the floor
