"""The angular speed limit of the pushable bodies (Cardboxes, U/L/J blocks), as PhysX has it.

PhysX clamps every dynamic body's angular speed to its ``maxAngularVelocity``, which Animal-AI's
project leaves at Unity's old default, 7 rad/s (``m_DefaultMaxAngularSpeed: 7`` in
``ProjectSettings/DynamicsManager.asset``, docs/animal-ai-facts.md §2). MuJoCo has no such
bound. A light box or block struck on an edge by the agent at full speed, or caught between
the agent and a wall, spun up to tens of radians per second within a step or two, dug its
corners through the floor or into the wall and diverged: the audit's ``SimulationUnstable``
crashes in Cardbox1/2 and UObject (issue #22). Clamped, a struck plank tips or turns over as
it would in Unity instead.

Only the pushable bodies are limited for now: they are where MuJoCo needed it. The balls
(which roll, so a 1 m ball above 3.5 m/s turns faster than 7 rad/s) and the walls keep
MuJoCo's unbounded spin; limiting them changes how balls roll and must be checked against the
Unity recording first.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from llm_aai.sim.corrections import ContactRead

MAX_ANGULAR_SPEED = 7.0
"""rad/s: ``Physics.defaultMaxAngularSpeed`` in Animal-AI's project settings."""


class AngularSpeedLimit:
    """Clamps the angular speed of the given free bodies, keeping the axis of their spin.

    A ``PhysicsCorrection`` (``llm_aai.sim.corrections``) with no state between steps
    (``state`` is None); it scales the bodies' angular velocities in ``data.qvel`` after each
    step, so the next step starts within the limit.

    Args:
        model, data: the compiled arena and its state.
        bodies: MuJoCo names of the free bodies to limit.
        limit: the largest angular speed (rad/s).
    """

    def __init__(self, model, data, bodies: Sequence[str],
                 limit: float = MAX_ANGULAR_SPEED) -> None:
        self._qvel = data.qvel
        starts = [int(model.jnt_dofadr[model.body_jntadr[model.body(name).id]])
                  for name in bodies]
        # a free joint's angular velocity: its last three degrees of freedom
        self._dofs = np.array([[first + 3, first + 4, first + 5] for first in starts],
                              dtype=np.intp).reshape(-1, 3)
        self._limit = float(limit)
        self.state = None

    def start(self, contacts: ContactRead) -> None:
        """Nothing to read."""

    def before_physics_step(self) -> None:
        """Nothing to prepare."""

    def after_physics_step(self, contacts: ContactRead) -> None:
        """Scale down every spin faster than the limit."""
        if not len(self._dofs):
            return
        spins = self._qvel[self._dofs]
        speeds = np.sqrt((spins * spins).sum(axis=1))
        fast = speeds > self._limit
        if fast.any():
            self._qvel[self._dofs[fast]] = spins[fast] * (self._limit / speeds[fast])[:, None]
