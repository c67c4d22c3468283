"""The balls' angular drag: Unity damps a ball's spin by its Rigidbody's angular drag, 0.05.

AAI's balls have no linear drag and an angular drag of 0.05 (docs/animal-ai-facts.md §4).
PhysX applies it before the solver as ``w <- w / (1 + dt x drag)`` per step. It is small
(0.1 % per physics step) but it is what slows a rolling ball in Unity: rolling, the floor's
friction ties the ball's speed to its spin, so a ball rolling on the floor loses about a third
of its speed in 30 s. MuJoCo has no drag of its own here; this correction applies it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from llm_aai.sim.corrections import ContactRead

BALL_ANGULAR_DRAG = 0.05
"""Unity's angular drag of the goal balls' Rigidbody (1/s)."""


class AngularDrag:
    """Damps the spin of the given free bodies as PhysX does.

    A ``PhysicsCorrection`` (``llm_aai.sim.corrections``) with no state between steps
    (``state`` is None); it scales the bodies' angular velocities in ``data.qvel``.

    Args:
        model, data: the compiled arena and its state.
        bodies: MuJoCo names of the free bodies to damp.
        drag: the angular drag (1/s).
    """

    def __init__(self, model, data, bodies: Sequence[str], drag: float = BALL_ANGULAR_DRAG):
        self._data = data
        dofs = []
        for name in bodies:
            first = int(model.jnt_dofadr[model.body_jntadr[model.body(name).id]])
            dofs += range(first + 3, first + 6)  # a free joint's angular velocity
        self._dofs = np.array(dofs, dtype=np.intp)
        self._factor = 1.0 / (1.0 + float(model.opt.timestep) * drag)
        self.state = None

    def start(self, contacts: ContactRead) -> None:
        """Nothing to read."""

    def before_physics_step(self) -> None:
        """Damp the spins for the coming step."""
        if len(self._dofs):
            self._data.qvel[self._dofs] *= self._factor

    def after_physics_step(self, contacts: ContactRead) -> None:
        """Nothing to finish."""
