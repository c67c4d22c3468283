"""Animal-AI's movement model for the agent, applied on top of MuJoCo's contact solver.

Unity's ``TrainingAgent`` does this on every physics step (docs/animal-ai-facts.md §1):

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
frictionless in MuJoCo) and integrates; then this module finishes the contacts of *that same
step* the way PhysX's solver does (below) and applies the agent's Coulomb friction.
Why not MuJoCo's own friction: its soft contacts turn a fast slide into a large normal force
(the agent pops off the floor and loses ~2.7 m/s in one step), nothing like PhysX.

**Two velocities per step, as in PhysX's PGS solver** (Unity's default, which AAI keeps). PhysX
first solves the contacts with a *bias* that pushes a penetrating body out by 80 % of the depth
in one step (at most ``maxDepenetrationVelocity`` = 10 m/s) and lets a body that is still apart
but within the contact offset (2 cm) close the gap and no more; it moves the body with *that*
velocity. It then solves again without the push-out, and that velocity is what the body keeps.
So a body that hits a wall is out of it a step later and does not rebound. MuJoCo's soft
contact instead pushed out a quarter of the depth per step and kept the push as a rebound
(2.2 m/s after a 15 m/s hit), which left the recording's frame 20 showing the agent 8 cm deeper
in the wall than Unity's frame does, and left it 20-40 cm inside a box it hit at speed for
several steps while kicking the box 5 m/s faster than itself. Here the agent's contacts carry a
direct ``solref`` (stiffness 0.8/dt², damping 1/dt, ``contact_attributes``) so that MuJoCo's
velocity *is* PhysX's biased one; MuJoCo moves the bodies with it; ``after_step`` then removes
the push-out from the kept velocity (for a body the agent pushes, from both bodies:
``llm_aai.sim.push_contacts``), caps the push at 10 m/s against static geoms, and
applies the gap rule to static contacts MuJoCo reports inside the 2 cm ``gap`` (separated: no
force from MuJoCo).

Each contact's friction removes at most ``mu * N * dt / m`` of the velocity along the contact
plane, with N the normal force of that pass: the biased one for the motion, the unbiased one for
the kept velocity. Against a body that moves, friction acts on the two bodies' relative sliding
at the contact, on both of them (equal and opposite), and stops no more than that sliding.
N already carries PhysX's damping factor, because the velocity the contact cancels was damped:
on flat ground N = 0.968 m g and the cut is the fact sheet's 0.114 m/s per step. On a ramp the
thrust pressing into the slope raises N, which is what limits climbing to about 45 degrees.

Why the same step matters: when the agent runs into a wall at an angle, the impact's normal
impulse bounds the friction that stops the slide along the wall. Applied a step late (as an
earlier version did, with the previous step's N), the agent slid one more step along the wall
(15 cm at 7.6 m/s) and then lost the thrust-driven friction one step late when it left the
wall; the recording's frames after the wall at x = 23 (scripts 20-35) show Unity where the
same-step rule puts the agent, within about 2 cm.

Contacts inside the gap also count as touches (grounded flag, goals): PhysX reports a contact,
and Unity calls ``OnCollisionEnter``, once two colliders are within their summed contact
offsets.

The agent body has three slide joints and a yaw hinge: it slides and never rolls, like
Unity's frozen-rotation sphere. Its yaw is owned by this module and re-imposed after every
step, so contact torques cannot spin it. MuJoCo's gravity is cancelled for the agent
(``gravcomp``) because it is applied here, before the damping, as PhysX does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from llm_aai.sim.corrections import ContactRead
from llm_aai.sim.push_contacts import MovingContact, PushContacts

THRUST_DV = 1.0
"""m/s added per physics step: AddForce(speed 25 x 100 x dt, Acceleration) x dt."""
QUICK_STOP = 0.9
DAMPING = 1.0 - 1.6 * 0.02
FRICTION = 0.6
"""Unity's default material (agent, ground, walls, balls and U/L/J blocks use it)."""
PUSHABLE_PRIORITY = 1
"""Geom priority of the pushable classes (Cardboxes, U/L/J blocks; ``llm_aai.sim.looks``):
their geom friction is already the agent's coefficient with them, the PhysX average of their
material and the default one (0.425 for a Cardbox's LowFriction, 0.6 for a block)."""
GRAVITY = 9.81
DT = 0.02
TURN_DEG = 2.0
"""Degrees per physics step: rotationSpeed 100 x dt."""
GROUND_NORMAL_Z = 0.02
"""A contact counts as ground when its normal, pointing at the agent, has z above this."""
CONTACT_OFFSET = 0.02
"""Distance below which PhysX makes a contact: AAI's default contact offset (0.01 per collider,
``DynamicsManager.asset``), summed over the pair."""
DEPENETRATION = 0.8
"""Fraction of a penetration PhysX's PGS solver removes in one step."""
MAX_DEPENETRATION_SPEED = 10.0
"""m/s: AAI's ``m_DefaultMaxDepenetrationVelocity``, the cap on that push-out."""

IMMOVABLE_MASS = 1000.0
"""kg from which a body counts as the world for the agent's contact rules (``after_step``):
AAI's walls (10 t) and ramps (1 t). Against them PhysX changes the agent's velocity and barely
theirs: the agent's largest push (5 kN) is below their floor friction (59 kN and 5.9 kN,
mu 0.6), and a 26.7 m/s hit moves a 10 t wall by under 3 mm/s. Their own response to the
contact is MuJoCo's, which the agent's finish leaves alone."""

NEGLIGIBLE_REACTION = 1e-5
"""m/s: a reaction that would change a heavy body's velocity by less is not applied (it would
move a wall by under 0.2 micrometres per step; the agent pressing on a wall makes one every
step)."""
_ZERO = np.zeros(3)

AGENT_ACTIONS = (0, 1, 2)
"""Values of each of AAI's two action branches."""
MOVE_NONE, MOVE_FORWARD, MOVE_BACKWARD = 0, 1, 2
TURN_NONE, TURN_RIGHT, TURN_LEFT = 0, 1, 2


def contact_attributes() -> str:
    """MJCF attributes of the agent geom: MuJoCo solves its contacts like PhysX's biased pass.

    The reference acceleration ``-v/dt - 0.8 r/dt^2`` cancels the approach and pushes out 80 %
    of the depth ``r`` in one step, with full impedance so nothing is soft. ``gap`` makes
    MuJoCo report (without force) contacts up to the contact offset apart.
    """
    stiffness = DEPENETRATION / (DT * DT)
    damping = 1.0 / DT
    return (f'solref="{-stiffness:g} {-damping:g}" solimp="0.9999 0.9999 0.001" '
            f'gap="{CONTACT_OFFSET:g}"')


@dataclass
class AgentPhysicsState:
    """What the agent's physics carries from one physics step to the next.

    Attributes:
        yaw: Unity yaw in degrees (owned here, imposed on the hinge every step).
        grounded: the agent touched something below its centre on the last step.
        move, turn: the action of the current AAI step (``command``).
        before_solve: the agent's velocity handed to MuJoCo on the last step (m/s).
        pushes: the last step's contacts with moving bodies.
        contacts: the last step's agent contacts: (unit normal pointing at the agent,
            normal force N, friction coefficient, kind, distance, heavy), kind one of
            ``_SOLVED``, ``_PUSHED``, ``_APART``; heavy is (body, contact point) for a heavy
            free body (a wall, a ramp), else None.
        touching: geom ids the agent touched on the last step.
    """

    yaw: float
    grounded: bool = False  # AAI resets the flag at episode start
    move: int = MOVE_NONE
    turn: int = TURN_NONE
    before_solve: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])
    pushes: list[MovingContact] = field(default_factory=list)
    contacts: list[tuple] = field(default_factory=list)
    touching: list[int] = field(default_factory=list)


class AgentPhysics:
    """The agent's per-step velocity update and grounded flag, bound to one MuJoCo model.

    A ``PhysicsCorrection`` (``llm_aai.sim.corrections``). Its state between steps is
    ``state`` (``AgentPhysicsState``); it writes the agent's ``qpos``/``qvel`` and, through
    ``PushContacts``, the velocities of the bodies it pushes.

    Args:
        model: the compiled arena (``llm_aai.sim.scene``); needs joints ``agent_x``,
            ``agent_y``, ``agent_z``, ``agent_yaw`` and the geom ``agent``.
        data: its state.
        yaw: the agent's starting Unity yaw in degrees.
    """

    def __init__(self, model, data, yaw: float) -> None:
        import mujoco

        self._model = model
        self._data = data
        joint = model.joint("agent_x")
        self._dof = slice(int(joint.dofadr[0]), int(joint.dofadr[0]) + 3)
        self._moving = PushContacts(model, data, self._dof, DT)
        self._pos = slice(int(joint.qposadr[0]), int(joint.qposadr[0]) + 3)
        self._yaw_qpos = int(model.joint("agent_yaw").qposadr[0])
        self._yaw_dof = int(model.joint("agent_yaw").dofadr[0])
        self.geom = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, "agent")
        self._qvel = data.qvel
        # Slide joints measure displacement from the body's spawn position.
        self._origin = tuple(float(v) for v in model.body("agent").pos)
        self._qpos = data.qpos
        self.state = AgentPhysicsState(yaw=float(yaw) % 360.0)
        self._mass = float(model.body("agent").mass[0])
        # Coulomb coefficient of the agent against each geom (PhysX average combine).
        self._mu = [
            float(model.geom_friction[g, 0]) if model.geom_priority[g] == PUSHABLE_PRIORITY
            else FRICTION
            for g in range(model.ngeom)
        ]
        # Geoms of the world or of bodies too heavy for the agent to move (walls, ramps): the
        # ones the gap rule holds the agent off and whose contacts it finishes like a wall's.
        self._static = [
            int(model.body_weldid[model.geom_bodyid[g]]) == 0
            or float(model.body_mass[model.geom_bodyid[g]]) >= IMMOVABLE_MASS
            for g in range(model.ngeom)
        ]
        # The heavy free body behind each geom (-1: none), which takes the reaction of what the
        # finish changes in the agent's velocity (``_react``).
        self._heavy = [
            int(model.geom_bodyid[g]) if self._static[g]
            and int(model.body_weldid[model.geom_bodyid[g]]) != 0 else -1
            for g in range(model.ngeom)
        ]
        self._impulse = np.zeros((1, model.nv))  # scratch of _react
        self._change = np.zeros((1, model.nv))
        self._impose_yaw()

    @property
    def yaw(self) -> float:
        """Unity yaw in degrees, clockwise from +z seen from above."""
        return self.state.yaw

    @property
    def grounded(self) -> bool:
        """Whether the agent touched something below its centre on the last step."""
        return self.state.grounded

    @property
    def touching(self) -> list[int]:
        """Geom ids the agent touched on the last step."""
        return self.state.touching

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

    def command(self, move: int, turn: int) -> None:
        """Set the action every physics step of the coming AAI step applies.

        Args:
            move: 0 none, 1 forward, 2 backward.
            turn: 0 none, 1 right (clockwise), 2 left.
        """
        self.state.move, self.state.turn = move, turn

    def start(self, contacts: ContactRead) -> None:
        """Nothing to read at load: AAI starts the agent ungrounded, touching nothing."""

    def before_physics_step(self) -> None:
        """Apply one physics step's action, gravity and drag before MuJoCo integrates.

        Plain floats rather than numpy: this runs on every physics step, where numpy's
        per-call overhead on 3-vectors would dominate the simulator's time.
        """
        state = self.state
        move, turn = state.move, state.turn
        vx, vy, vz = self._qvel[self._dof].tolist()
        if state.grounded:
            if move == MOVE_NONE:
                vx, vy, vz = vx * QUICK_STOP, vy * QUICK_STOP, vz * QUICK_STOP
            else:
                thrust = THRUST_DV if move == MOVE_FORWARD else -THRUST_DV
                theta = math.radians(state.yaw)
                vx += thrust * math.sin(theta)
                vy += thrust * math.cos(theta)
        if turn:
            state.yaw = (state.yaw + (TURN_DEG if turn == TURN_RIGHT else -TURN_DEG)) % 360.0
        vz -= GRAVITY * DT
        state.before_solve = [vx * DAMPING, vy * DAMPING, vz * DAMPING]
        self._qvel[self._dof] = state.before_solve
        self._impose_yaw()

    def after_physics_step(self, contacts: ContactRead) -> None:
        """Read this step's agent contacts (grounded flag, forces); finish them as PhysX does.

        MuJoCo has moved the agent with its solved velocity: PhysX's biased pass before
        friction. From it come two velocities: the motion (push-out capped) and the kept one
        (push-out removed). Both then get their friction, and last the contacts' normal rules
        are imposed again, as PhysX's iterations converge to: friction cannot undo a push-out
        or let the agent into a wall, and a gap is closed only after friction slowed the
        approach. The position is corrected by how far the motion moved from the solved
        velocity.
        """
        self._impose_yaw()
        self._read_contacts(contacts)
        state = self.state
        if not state.contacts:
            return
        solved = self._qvel[self._dof].tolist()
        mx, my, mz = solved  # motion velocity (PhysX's biased pass)
        if state.pushes:  # moving bodies: finished in joint space, on both bodies
            self._moving.unbias(state.pushes)
            unrubbed = self._qvel[self._dof].tolist()
            self._moving.rub(state.pushes)
            # The motion takes the same friction impulse as the kept velocity.
            rubbed = self._qvel[self._dof].tolist()
            mx += rubbed[0] - unrubbed[0]
            my += rubbed[1] - unrubbed[1]
            mz += rubbed[2] - unrubbed[2]
        before = state.before_solve
        per_n = DT / self._mass  # velocity change per newton over one step
        vx, vy, vz = self._qvel[self._dof].tolist()  # kept velocity (PhysX's unbiased pass)
        frictions = []  # (normal, mu, N of the motion, N of the kept velocity, heavy contact)
        floors = []  # (normal, least normal speed of the motion, of the kept velocity)
        reactions = []  # (heavy body, contact point, agent's velocity change)
        for normal, force, mu, kind, distance, heavy in state.contacts:
            nx, ny, nz = normal
            if kind == _PUSHED:
                continue
            if kind == _APART:  # may close the gap in this step, no further
                limit = -distance / DT
                motion_n = max(limit - (mx * nx + my * ny + mz * nz), 0.0) / per_n
                kept_n = max(limit - (vx * nx + vy * ny + vz * nz), 0.0) / per_n
                frictions.append((normal, mu, motion_n, kept_n, heavy))
                floors.append((normal, limit, limit))
                continue
            kept_n = force
            if force > 0.0:
                approach = max(before[0] * nx + before[1] * ny + before[2] * nz, 0.0)
                push = (vx * nx + vy * ny + vz * nz) - approach
                if push > 0.0:  # the unbiased pass keeps no push-out
                    vx, vy, vz = vx - push * nx, vy - push * ny, vz - push * nz
                    kept_n = max(force - push / per_n, 0.0)
                    if heavy is not None:
                        reactions.append((*heavy, (-push * nx, -push * ny, -push * nz)))
                over = (mx * nx + my * ny + mz * nz) - max(approach, MAX_DEPENETRATION_SPEED)
                if over > 0.0:
                    mx, my, mz = mx - over * nx, my - over * ny, mz - over * nz
                floors.append((normal, mx * nx + my * ny + mz * nz, vx * nx + vy * ny + vz * nz))
            frictions.append((normal, mu, force, kept_n, heavy))
        for (nx, ny, nz), mu, motion_n, kept_n, heavy in frictions:
            mx, my, mz = _coulomb(mx, my, mz, nx, ny, nz, per_n * mu * motion_n)
            rubbed = _coulomb(vx, vy, vz, nx, ny, nz, per_n * mu * kept_n)
            if heavy is not None:
                reactions.append((*heavy, (rubbed[0] - vx, rubbed[1] - vy, rubbed[2] - vz)))
            vx, vy, vz = rubbed
        for (nx, ny, nz), motion_least, kept_least in floors:
            rise = motion_least - (mx * nx + my * ny + mz * nz)
            if rise > 0.0:
                mx, my, mz = mx + rise * nx, my + rise * ny, mz + rise * nz
            rise = kept_least - (vx * nx + vy * ny + vz * nz)
            if rise > 0.0:
                vx, vy, vz = vx + rise * nx, vy + rise * ny, vz + rise * nz
        self._qvel[self._dof] = (vx, vy, vz)
        start = self._pos.start
        self._qpos[start] += (mx - solved[0]) * DT
        self._qpos[start + 1] += (my - solved[1]) * DT
        self._qpos[start + 2] += (mz - solved[2]) * DT
        if reactions:
            self._react(reactions)

    def _react(self, reactions) -> None:
        """Give each heavy body the reaction of what the finish changed in the agent's velocity.

        MuJoCo's solve pushed the two bodies apart with the biased impulse; the finish takes
        the push-out off the agent and rubs it against the body: the equal and opposite impulse
        on the body keeps the pair's momentum, so a wall hit at speed keeps what PhysX gives it
        (the agent's momentum, less the floor's friction), not the push-out on top.
        """
        import mujoco

        model, m = self._model, self._mass
        impulse, change = self._impulse, self._change
        impulse[:] = 0.0
        applied = False
        for body, point, (dx, dy, dz) in reactions:
            if (dx * dx + dy * dy + dz * dz) * m * m < (NEGLIGIBLE_REACTION
                                                        * float(model.body_mass[body])) ** 2:
                continue
            mujoco.mj_applyFT(model, self._data, np.array([-m * dx, -m * dy, -m * dz]),
                              _ZERO, np.array(point), body, impulse[0])
            applied = True
        if applied:
            mujoco.mj_solveM(model, self._data, change, impulse)
            self._qvel += change[0]

    def _impose_yaw(self) -> None:
        self._qpos[self._yaw_qpos] = -math.radians(self.state.yaw)
        self._qvel[self._yaw_dof] = 0.0

    def _read_contacts(self, read: ContactRead) -> None:
        contacts = []
        pushes = []
        touching: list[int] = []
        grounded = False
        if read.count:
            agent = self.geom
            columns = None
            for k, (geom1, geom2) in enumerate(read.geoms):
                if geom1 != agent and geom2 != agent:
                    continue
                if columns is None:
                    columns = (read.rows, read.forces, read.frames)
                rows, forces, frames = columns
                other = geom2 if geom1 == agent else geom1
                address = rows[k]
                distance = 0.0
                if address >= 0:
                    force = max(forces[address], 0.0)
                    kind = _SOLVED if self._static[other] else _PUSHED
                else:
                    distance = read.distances[k]
                    if read.excluded[k] != 1 or distance >= CONTACT_OFFSET:
                        continue  # not within the contact offset: not a touch
                    if not self._static[other]:
                        touching.append(other)  # a touch, but not held off
                        continue
                    force = 0.0
                    kind = _APART
                # MuJoCo's normal points from geom1 to geom2: make it point at the agent.
                nx, ny, nz = frames[k][:3]
                if geom1 == agent:
                    nx, ny, nz = -nx, -ny, -nz
                if kind == _PUSHED:
                    pushes.append(MovingContact((nx, ny, nz), address,
                                                int(self._model.geom_bodyid[other]),
                                                np.array(read.points[k]), force,
                                                self._mu[other]))
                body = self._heavy[other]
                heavy = (body, read.points[k]) if body >= 0 else None
                contacts.append(((nx, ny, nz), force, self._mu[other], kind, distance, heavy))
                touching.append(other)
                grounded = grounded or nz > GROUND_NORMAL_Z
        state = self.state
        state.contacts = contacts
        state.pushes = pushes
        state.touching = touching
        state.grounded = grounded


_SOLVED, _PUSHED, _APART = 0, 1, 2
"""Kinds of agent contact: with a static geom, solved by MuJoCo with the PhysX-like direct
solref; the same with a body that moves (boxes, balls), whose push-out is then removed in joint
space; with a static geom apart but within the contact offset (no MuJoCo force: the agent may
close the distance in one step, no more)."""


def _coulomb(vx: float, vy: float, vz: float, nx: float, ny: float, nz: float,
             most: float) -> tuple[float, float, float]:
    """The velocity once friction removed up to ``most`` m/s of it in the plane normal to n."""
    along = vx * nx + vy * ny + vz * nz
    tx, ty, tz = vx - along * nx, vy - along * ny, vz - along * nz
    speed = math.sqrt(tx * tx + ty * ty + tz * tz)
    if speed <= 0.0:
        return vx, vy, vz
    cut = min(most, speed) / speed
    return vx - tx * cut, vy - ty * cut, vz - tz * cut
