"""Coulomb friction between the floor and the bodies the agent pushes (Cardboxes, U/L/J).

Why not MuJoCo's own contact friction: MuJoCo resolves contacts as a convex problem with
soft constraints, and in that model a contact that *slides* gets a separating velocity
roughly proportional to the friction coefficient times the slip speed. For slow slides that
is invisible; for a 1-2 kg Cardbox that a 100 kg agent kicks from rest to 15-20 m/s in one
0.02 s step it is not: measured, a lone 1 kg box given 10 m/s along the floor rose 0.7 m and
one given 20 m/s rose 2.7 m (halving the timestep only divides that by about four), and in
the tutorial recording's box pile the pushed boxes flew several metres up. PhysX (Unity)
keeps the normal and friction impulses separate: a box slid along flat ground stays on it.
The agent's own friction is applied outside MuJoCo for the same reason
(``llm_aai.sim.agent_physics``).

So a pushable body meets the floor through explicit *frictionless* contact pairs (normal
force only; ``llm_aai.sim.scene``), and its floor friction is a MuJoCo dry-friction
("frictionloss") constraint on the body's own degrees of freedom, whose bound this module
sets before every physics step from the floor's normal force on the previous step:

- sliding: a force of at most ``mu * N`` against the horizontal velocity. MuJoCo bounds each
  degree of freedom separately, so the bound is split over world x and y in proportion to
  the velocity's components: the resulting force is ``mu * N`` along the slide, whatever its
  heading. At rest it is split evenly (the static region is then the square inscribed in the
  Coulomb circle, slightly conservative);
- spinning about the floor normal: a torque of at most ``mu * sum(N_k * r_k)``, ``r_k`` being
  each contact point's horizontal distance from the centre of mass, as corner contacts
  sliding tangentially would give.

Because the constraint is solved inside MuJoCo's step, it stops a slide without overshoot
and holds a resting body; it has no normal component, so nothing lifts. ``N`` is the real
contact force, so a box carrying another one drags twice as hard, and a box in the air or
resting on another box gets none. The coefficient is the PhysX average of the two materials
(``llm_aai.sim.looks``): 0.425 for the Cardboxes' LowFriction against the default floor, 0.6
for U/L/J blocks. Their friction against everything else but the agent (walls, ramps, the
fence, balls, each other) is also applied outside MuJoCo, by ``llm_aai.sim.pair_friction``.

The bound acts on the body's degrees of freedom, i.e. at the centre of mass, but real floor
friction acts at the bottom face, below it, and pitches a sliding body forward. So while a
body slides, the torque of the sliding friction ``mu * N`` about the centre of mass, applied at
the floor contacts' force-weighted centroid, is added as an external torque. It matters when
the agent pushes a tall box below its centre: without it the recording's 2 m Cardbox, pushed
along the fence in script 38, tipped 67 degrees and slid out of the agent's way, where Unity's
frame shows it upright in front of the agent; with it the box tilts at most 11 degrees.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from llm_aai.sim.corrections import ContactRead

STILL = 1e-6
"""Horizontal speed (m/s) below which a body counts as at rest (even split of the bound)."""
RESTING_TOLERANCE = 0.01
"""A resting body's bounds are rewritten only when its floor force changed by more than this."""


@dataclass
class FloorFrictionState:
    """What the floor friction carries from one physics step to the next, per pushable body.

    Attributes:
        normal: the floor's normal force on the body on the last step (N).
        arm: the sum of ``N_k * r_k`` over its floor contacts (N m).
        written: the normal force its friction bounds were last set from (0: none set).
        centroid: force-weighted centroid of its floor contacts (None: no contact).
        pitching: whether a sliding-friction torque is applied to it.
    """

    normal: list[float] = field(default_factory=list)
    arm: list[float] = field(default_factory=list)
    written: list[float] = field(default_factory=list)
    centroid: list[tuple[float, float, float] | None] = field(default_factory=list)
    pitching: list[bool] = field(default_factory=list)


class FloorFriction:
    """Sets the floor friction of the pushable bodies of one compiled arena.

    A ``PhysicsCorrection`` (``llm_aai.sim.corrections``). Its state between steps is
    ``state`` (``FloorFrictionState``) plus two MuJoCo arrays it writes: the bodies' rows of
    ``model.dof_frictionloss`` (the friction bounds) and of ``data.xfrc_applied`` (the pitching
    torque).

    Plain Python floats and lists rather than numpy: this runs on every physics step over a
    handful of bodies, where numpy's per-call overhead would cost more than the physics.

    Args:
        model: the compiled arena; needs the plane geom ``floor``.
        data: its state.
        bodies: for each pushable body, its MuJoCo body name and geom names (each geom meets
            the floor through a frictionless ``<pair>``).
    """

    def __init__(self, model, data, bodies: Sequence[tuple[str, Sequence[str]]]) -> None:
        import mujoco

        self._model, self._data = model, data
        self._floor = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, "floor")
        self._bodies = [int(model.body(name).id) for name, _ in bodies]
        self._dofs = [int(model.jnt_dofadr[model.body_jntadr[b]]) for b in self._bodies]
        # Which pushable each geom belongs to (-1: none).
        self._owner = [-1] * model.ngeom
        self._mu = [0.0] * len(bodies)
        for k, (_, geoms) in enumerate(bodies):
            for name in geoms:
                geom = int(model.geom(name).id)
                self._owner[geom] = k
                self._mu[k] = float(model.geom_friction[geom, 0])
        n = len(bodies)
        self.state = FloorFrictionState([0.0] * n, [0.0] * n, [0.0] * n, [None] * n,
                                        [False] * n)

    def start(self, contacts: ContactRead) -> None:
        """Read the floor forces of the world as built."""
        self.after_physics_step(contacts)

    def before_physics_step(self) -> None:
        """Set each body's friction bounds from the last step's floor forces and velocity."""
        if not self._bodies:
            return
        data = self._data
        qvel = data.qvel.tolist()
        frictionloss = self._model.dof_frictionloss
        state = self.state
        written = state.written
        for k, dof in enumerate(self._dofs):
            normal = state.normal[k]
            if normal <= 0.0:
                if written[k]:
                    frictionloss[dof : dof + 6] = 0.0
                    written[k] = 0.0
                continue
            vx, vy = qvel[dof], qvel[dof + 1]
            speed = math.hypot(vx, vy)
            if speed <= STILL and abs(normal - written[k]) <= RESTING_TOLERANCE * written[k]:
                continue  # a resting body keeps its bounds (the common case, so skip the work)
            mu = self._mu[k]
            slide = mu * normal
            if speed > STILL:
                fx, fy = slide * abs(vx) / speed, slide * abs(vy) / speed
            else:
                fx = fy = slide * math.sqrt(0.5)
            spin = mu * state.arm[k]
            # The world vertical in the body's frame: a free joint's angular dofs are local.
            ux, uy, uz = data.xmat[self._bodies[k], 6:9].tolist()
            frictionloss[dof : dof + 6] = (fx, fy, 0.0, spin * abs(ux), spin * abs(uy),
                                           spin * abs(uz))
            written[k] = normal
        self._pitch(qvel)

    def _pitch(self, qvel: list[float]) -> None:
        """Apply the torque of each sliding body's floor friction about its centre of mass."""
        data = self._data
        state = self.state
        for k, dof in enumerate(self._dofs):
            body = self._bodies[k]
            vx, vy = qvel[dof], qvel[dof + 1]
            speed = math.hypot(vx, vy)
            centroid = state.centroid[k]
            if speed <= STILL or centroid is None:
                if state.pitching[k]:
                    data.xfrc_applied[body, 3:6] = 0.0
                    state.pitching[k] = False
                continue
            slide = self._mu[k] * state.normal[k] / speed
            fx, fy = -vx * slide, -vy * slide  # the sliding friction force (horizontal)
            cx, cy, cz = data.xipos[body].tolist()
            rx, ry, rz = centroid[0] - cx, centroid[1] - cy, centroid[2] - cz
            data.xfrc_applied[body, 3:6] = (-rz * fy, rz * fx, rx * fy - ry * fx)
            state.pitching[k] = True

    def after_physics_step(self, contacts: ContactRead) -> None:
        """Read the floor's normal force on each pushable body from this step's contacts.

        While every pushable body rests (``contacts.bodies_moving`` False) the forces already
        read are kept: they do not change, and box arenas spend most steps that way.
        """
        if not self._bodies or not contacts.bodies_moving:
            return
        state = self.state
        normal, arm, centroids = state.normal, state.arm, state.centroid
        sums = [[0.0, 0.0, 0.0] for _ in normal]
        for k in range(len(normal)):
            normal[k] = arm[k] = 0.0
            centroids[k] = None
        if not contacts.count:
            return
        floor, owner, bodies = self._floor, self._owner, self._bodies
        arrays = None
        # The floor is a plane, MuJoCo's first geom type: it is always a contact's geom1.
        for k, (geom1, geom2) in enumerate(contacts.geoms):
            if geom1 != floor:
                continue
            body = owner[geom2]
            if body < 0:
                continue
            if arrays is None:
                arrays = (contacts.rows, contacts.forces, contacts.points,
                          self._data.xipos.tolist())
            address, force, where, centre = arrays
            row = address[k]
            if row < 0:  # an inactive contact (no constraint)
                continue
            f = force[row]
            if f <= 0.0:
                continue
            px, py, pz = where[k]
            cx, cy, _ = centre[bodies[body]]
            normal[body] += f
            arm[body] += f * math.hypot(px - cx, py - cy)
            total = sums[body]
            total[0] += f * px
            total[1] += f * py
            total[2] += f * pz
        for k, total in enumerate(sums):
            if normal[k] > 0.0:
                centroids[k] = (total[0] / normal[k], total[1] / normal[k],
                                     total[2] / normal[k])
