"""The agent's contacts with bodies that move (boxes, balls), finished as PhysX finishes them.

MuJoCo has solved such a contact with the agent's PhysX-like direct ``solref``
(``llm_aai.sim.agent_physics``): the velocities it leaves are PhysX's *biased* pass, which pushes
the two bodies apart by 80 % of their overlap in one step. PhysX moves the bodies with those
velocities but keeps the unbiased ones, and applies friction between the two. Against a wall
only the agent's three velocities change; here both bodies do, so the corrections are impulses
along a joint-space row (the contact point's Jacobians) shared by the two bodies through the
mass matrix, and they change ``data.qvel`` in place.

Before this, MuJoCo's soft contact kicked a 1 kg box hit at 20 m/s 5 m/s faster than the
agent while leaving the agent 0.3 m inside it a step later, and the agent's friction against a
box braked the agent alone.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class MovingContact:
    """An agent contact with a body that moves, as MuJoCo solved it."""

    normal: tuple[float, float, float]  # unit, pointing at the agent
    address: int  # its constraint row (efc_*)
    body: int  # the other body
    point: np.ndarray  # world position of the contact
    force: float  # normal force (N): MuJoCo's, then what the unbiased pass keeps
    mu: float  # Coulomb coefficient of the pair


class PushContacts:
    """Finishes the agent's contacts with moving bodies of one compiled arena.

    Args:
        model: the compiled arena.
        data: its state, right after ``mj_step`` (contacts, ``efc_vel`` and the factorised
            mass matrix are those of the step just taken).
        agent_dofs: the agent's three slide degrees of freedom (x, y, z).
        dt: the physics step (s).
    """

    def __init__(self, model, data, agent_dofs: slice, dt: float) -> None:
        self._model, self._data = model, data
        self._agent = agent_dofs
        self._dt = dt
        self._jac = np.zeros((3, model.nv))

    def unbias(self, pushes: list[MovingContact]) -> None:
        """Take the push-out off the kept velocities of the agent and of the bodies it touches.

        The same rule as against a wall, in joint space: the relative normal velocity keeps no
        more than it had before the solve (``efc_vel``). What is left of each contact's normal
        force is written back to it and bounds its friction (``rub``).
        """
        data = self._data
        qvel = data.qvel
        for push in pushes:
            self._point_jacobian(push)
            row = self._row(push.normal)
            excess = float(row @ qvel) - max(float(data.efc_vel[push.address]), 0.0)
            if excess > 0.0:
                response = self._response(row)
                impulse = excess / float(row @ response)
                qvel -= response * impulse
                push.force = max(push.force - impulse / self._dt, 0.0)

    def rub(self, pushes: list[MovingContact]) -> None:
        """Coulomb friction between the agent and the bodies it touches, on both of them.

        It acts on their relative sliding at the contact and stops at most that (static
        friction), so a box carried along is not braked and the agent loses what the box gains.
        """
        qvel = self._data.qvel
        for push in pushes:
            if push.force <= 0.0:
                continue
            self._point_jacobian(push)
            normal = np.asarray(push.normal)
            relative = qvel[self._agent] - self._jac @ qvel
            sliding = relative - (relative @ normal) * normal
            speed = float(np.linalg.norm(sliding))
            if speed <= 1e-9:
                continue
            row = self._row(sliding / speed)
            response = self._response(row)
            impulse = min(push.mu * push.force * self._dt, speed / float(row @ response))
            qvel -= response * impulse

    def _point_jacobian(self, push: MovingContact) -> None:
        """The pushed body's translational Jacobian at the contact point, into ``self._jac``."""
        import mujoco

        mujoco.mj_jac(self._model, self._data, self._jac, None, push.point, push.body)

    def _row(self, direction) -> np.ndarray:
        """Joint-space row of the agent's velocity along ``direction``, relative to the point.

        The point is the one whose Jacobian ``_point_jacobian`` last left in ``self._jac``.
        """
        direction = np.asarray(direction)
        row = -(direction @ self._jac)
        row[self._agent] += direction
        return row

    def _response(self, row: np.ndarray) -> np.ndarray:
        """M^-1 row: the joint velocities a unit impulse along ``row`` produces."""
        import mujoco

        response = np.empty((1, self._model.nv))
        mujoco.mj_solveM(self._model, self._data, response, row.reshape(1, -1))
        return response[0]
