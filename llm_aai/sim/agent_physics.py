"""Animal-AI's movement model for the agent, applied on top of MuJoCo's contact solver.

Unity's ``TrainingAgent`` does this on every physics step (aai-rules.md section 1):

1. if grounded: forward/backward thrust adds 1.0 m/s along the facing direction, or, with no
   move action, the whole velocity is multiplied by 0.9 ("quick stop", also on turn-only
   steps);
2. the yaw turns by +-2 degrees (even airborne); the velocity is *not* rotated;
3. PhysX then damps the velocity (linear drag 1.6: ``v *= 1 - 1.6 * 0.02``), resolves contacts
   with Coulomb friction and integrates the position. The agent has Unity's default material
   (mu 0.6) and PhysX averages the two materials' coefficients, so the agent's friction is 0.6
   against everything except the Cardboxes, whose LowFriction material (0.25) gives 0.425.

Steps 1-2, gravity and the damping are applied here, directly to the agent's velocity, in
PhysX's order; MuJoCo then resolves the contacts (normal forces only: the agent geom is
frictionless in MuJoCo) and integrates; then this module applies the agent's Coulomb friction
for the contacts of *that same step*, as PhysX's solver does, and moves the position back by
what the friction took off the velocity (semi-implicit Euler moves by the final velocity).
Why not MuJoCo's own friction: its soft contacts turn a fast slide into a large normal force
(the agent pops off the floor and loses ~2.7 m/s in one step), nothing like PhysX.

Each contact's friction removes at most ``mu * N * dt / m`` of the velocity along the contact
plane, with N the normal force MuJoCo found for it. N already carries PhysX's damping factor,
because the velocity the contact cancels was damped: on flat ground N = 0.968 m g and the cut
is the fact sheet's 0.114 m/s per step. On a ramp the thrust pressing into the slope raises N,
which is what limits climbing to about 45 degrees.

Why the same step matters: when the agent runs into a wall at an angle, the impact's normal
impulse bounds the friction that stops the slide along the wall. Applied a step late (as an
earlier version did, with the previous step's N), the agent slid one more step along the wall
(15 cm at 7.6 m/s) and then lost the thrust-driven friction one step late when it left the
wall; the recording's frames after the wall at x = 23 (scripts 21-35) show Unity where the
same-step rule puts the agent, within about 2 cm.

The agent body has three slide joints and a yaw hinge: it slides and never rolls, like
Unity's frozen-rotation sphere. Its yaw is owned by this module and re-imposed after every
step, so contact torques cannot spin it. MuJoCo's gravity is cancelled for the agent
(``gravcomp``) because it is applied here, before the damping, as PhysX does.
"""

from __future__ import annotations

import math

import numpy as np

THRUST_DV = 1.0
"""m/s added per physics step: AddForce(speed 25 x 100 x dt, Acceleration) x dt."""
QUICK_STOP = 0.9
DAMPING = 1.0 - 1.6 * 0.02
FRICTION = 0.6
"""Unity's default material (agent, ground, walls, balls and U/L/J blocks use it)."""
PUSHABLE_PRIORITY = 1
"""Geom priority of the Cardbox class (``llm_aai.sim.looks``): its friction is already the
PhysX average of LowFriction and the default material, i.e. the agent's coefficient with it."""
GRAVITY = 9.81
DT = 0.02
TURN_DEG = 2.0
"""Degrees per physics step: rotationSpeed 100 x dt."""
GROUND_NORMAL_Z = 0.02
"""A contact counts as ground when its normal, pointing at the agent, has z above this."""

AGENT_ACTIONS = (0, 1, 2)
"""Values of each of AAI's two action branches."""
MOVE_NONE, MOVE_FORWARD, MOVE_BACKWARD = 0, 1, 2
TURN_NONE, TURN_RIGHT, TURN_LEFT = 0, 1, 2


class AgentPhysics:
    """The agent's per-step velocity update and grounded flag, bound to one MuJoCo model.

    Args:
        model: the compiled arena (``llm_aai.sim.scene``); needs joints ``agent_x``,
            ``agent_y``, ``agent_z``, ``agent_yaw`` and the geom ``agent``.
        data: its state.
        yaw: the agent's starting Unity yaw in degrees.
    """

    def __init__(self, model, data, yaw: float) -> None:
        import mujoco

        self._data = data
        joint = model.joint("agent_x")
        self._dof = slice(int(joint.dofadr[0]), int(joint.dofadr[0]) + 3)
        self._pos = slice(int(joint.qposadr[0]), int(joint.qposadr[0]) + 3)
        self._yaw_qpos = int(model.joint("agent_yaw").qposadr[0])
        self._yaw_dof = int(model.joint("agent_yaw").dofadr[0])
        self.geom = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, "agent")
        self._qvel = data.qvel
        # Slide joints measure displacement from the body's spawn position.
        self._origin = tuple(float(v) for v in model.body("agent").pos)
        self._qpos = data.qpos
        self.yaw = float(yaw) % 360.0
        self.grounded = False  # AAI resets the flag at episode start
        self._mass = float(model.body("agent").mass[0])
        # Coulomb coefficient of the agent against each geom (PhysX average combine).
        self._mu = [
            float(model.geom_friction[g, 0]) if model.geom_priority[g] == PUSHABLE_PRIORITY
            else FRICTION
            for g in range(model.ngeom)
        ]
        # The last step's agent contacts: (unit normal pointing at the agent, normal force N,
        # friction coefficient).
        self._contacts: list[tuple[tuple[float, float, float], float, float]] = []
        self.touching: list[int] = []  # geom ids the agent touched on the last step
        self._impose_yaw()

    @property
    def velocity(self) -> np.ndarray:
        """MuJoCo-frame velocity of the agent (a view; copy before keeping it)."""
        return self._qvel[self._dof]

    @property
    def position(self) -> tuple[float, float, float]:
        """MuJoCo-frame world position of the agent's centre."""
        x, y, z = self._qpos[self._pos].tolist()
        return (self._origin[0] + x, self._origin[1] + y, self._origin[2] + z)

    def friction_with(self, geom: int) -> float:
        """The Coulomb coefficient of the agent's contact with MuJoCo geom ``geom``."""
        return self._mu[geom]

    def before_step(self, move: int, turn: int) -> None:
        """Apply one physics step's action, gravity and drag before MuJoCo integrates.

        Plain floats rather than numpy: this runs on every physics step, where numpy's
        per-call overhead on 3-vectors would dominate the simulator's time.

        Args:
            move: 0 none, 1 forward, 2 backward.
            turn: 0 none, 1 right (clockwise), 2 left.
        """
        vx, vy, vz = self._qvel[self._dof].tolist()
        if self.grounded:
            if move == MOVE_NONE:
                vx, vy, vz = vx * QUICK_STOP, vy * QUICK_STOP, vz * QUICK_STOP
            else:
                thrust = THRUST_DV if move == MOVE_FORWARD else -THRUST_DV
                theta = math.radians(self.yaw)
                vx += thrust * math.sin(theta)
                vy += thrust * math.cos(theta)
        if turn:
            self.yaw = (self.yaw + (TURN_DEG if turn == TURN_RIGHT else -TURN_DEG)) % 360.0
        vz -= GRAVITY * DT
        self._qvel[self._dof] = (vx * DAMPING, vy * DAMPING, vz * DAMPING)
        self._impose_yaw()

    def after_step(self) -> None:
        """Read this step's agent contacts (grounded flag, normal forces); apply their friction.

        MuJoCo has already moved the agent by the pre-friction velocity, so the position is
        moved back by the velocity that friction removed times the step.
        """
        self._impose_yaw()
        self._read_contacts()
        if not self._contacts:
            return
        vx, vy, vz = before = self._qvel[self._dof].tolist()
        scale = DT / self._mass
        for (nx, ny, nz), force, mu in self._contacts:
            along = vx * nx + vy * ny + vz * nz
            tx, ty, tz = vx - along * nx, vy - along * ny, vz - along * nz
            speed = math.sqrt(tx * tx + ty * ty + tz * tz)
            if speed > 0.0:
                cut = min(scale * mu * force, speed) / speed
                vx, vy, vz = vx - tx * cut, vy - ty * cut, vz - tz * cut
        self._qvel[self._dof] = (vx, vy, vz)
        start = self._pos.start
        self._qpos[start] -= (before[0] - vx) * DT
        self._qpos[start + 1] -= (before[1] - vy) * DT
        self._qpos[start + 2] -= (before[2] - vz) * DT

    def _impose_yaw(self) -> None:
        self._qpos[self._yaw_qpos] = -math.radians(self.yaw)
        self._qvel[self._yaw_dof] = 0.0

    def _read_contacts(self) -> None:
        data = self._data
        contacts = []
        touching: list[int] = []
        grounded = False
        if data.ncon:
            contact = data.contact
            agent = self.geom
            for k, (geom1, geom2) in enumerate(contact.geom.tolist()):
                if geom1 != agent and geom2 != agent:
                    continue
                address = int(contact.efc_address[k])
                if address < 0:  # an inactive contact (no constraint): not a touch
                    continue
                # MuJoCo's normal points from geom1 to geom2: make it point at the agent.
                nx, ny, nz = contact.frame[k, :3].tolist()
                if geom1 == agent:
                    nx, ny, nz = -nx, -ny, -nz
                force = max(float(data.efc_force[address]), 0.0)
                other = geom2 if geom1 == agent else geom1
                contacts.append(((nx, ny, nz), force, self._mu[other]))
                touching.append(other)
                grounded = grounded or nz > GROUND_NORMAL_Z
        self._contacts = contacts
        self.touching = touching
        self.grounded = grounded
