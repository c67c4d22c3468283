"""Coulomb friction of the pushable bodies' contacts with everything but the agent and the floor.

Pushable bodies are the Cardboxes and the U/L/J blocks. Their contacts with walls, ramps, the
fence, balls and each other are frictionless in MuJoCo (condim 1: normal force only,
``llm_aai.sim.looks``), and this module applies their friction as an impulse before every
physics step. The agent's contacts are finished by ``llm_aai.sim.agent_physics`` and the
floor's by ``llm_aai.sim.floor_friction``.

Why not MuJoCo's own contact friction: the same reason as for the floor
(``llm_aai.sim.floor_friction``): in MuJoCo's convex soft-contact model a *sliding* contact
gets a separating velocity of roughly the friction coefficient times the slip speed.
Measured:

- when the agent knocks the bottom box of a pile out at ~19 m/s, the box on top slides over
  it at that speed and was thrown ~1 m up; in PhysX it simply loses its support and falls;
- a 2 m Cardbox sliding along the fence at 14 m/s that touches it at 2.9 m/s bounced off at
  4.5 m/s, faster than it came (PhysX, with bounciness 0, stops the approach and keeps it
  against the fence).

For each pair of bodies in contact on the previous step (a static geom counts as a body of
its own, which never moves), with ``N`` the sum of its contacts' normal forces, ``p`` their
centre of pressure (the force-weighted mean point) and ``n`` the force-weighted mean normal:

- the slip is the relative velocity of the two bodies at ``p``, minus its part along ``n``;
- the impulse opposes the slip, equal and opposite on the two bodies, applied at ``p`` (so it
  also spins them), of magnitude ``min(mu * N * dt, slip / w)``, where ``w`` is the slip
  change per unit impulse of the two rigid bodies (linear and rotational, about each centre
  of mass; zero for a static geom). The second bound stops a slide exactly instead of
  reversing it, which is also what holds a resting box in place (static friction). It is why
  the pair's contacts are lumped: each of a face contact's 4-8 points stopping the whole slip
  on its own would reverse it several times over.

``N`` lags one step, as for the agent's own friction (``llm_aai.sim.agent_physics``); on a
resting pile it is constant, so the lag only matters in the first step of an impact. The
coefficient is PhysX's average of the two materials: the Cardboxes' LowFriction (0.25) and
Unity's default (0.6) for everything else, so 0.25 box on box, 0.425 box on wall and 0.6
block on wall.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from llm_aai.sim.agent_physics import FRICTION as DEFAULT_FRICTION
from llm_aai.sim.corrections import ContactRead

STILL = 1e-6
"""Slip speed (m/s) below which a contact is left alone."""
LOW_FRICTION = 0.25
"""The Cardboxes' LowFriction material (static and dynamic); every other collider has Unity's
default material (``DEFAULT_FRICTION``)."""


@dataclass
class PairFrictionState:
    """What the pair friction carries from one physics step to the next.

    Attributes:
        contacts: the last step's lumped contacts: (side a, side b, centre of pressure, unit
            normal a->b, total normal force N, mu); a side is a body id, or -1 - geom for a
            static geom.
        pushed: bodies whose ``qfrc_applied`` this module wrote (cleared after the step).
    """

    contacts: list[tuple[int, int, tuple, tuple, float, float]] = field(default_factory=list)
    pushed: set[int] = field(default_factory=set)


class PairFriction:
    """Applies the friction of the pushable bodies' contacts in one compiled arena.

    A ``PhysicsCorrection`` (``llm_aai.sim.corrections``). Its state between steps is
    ``state`` (``PairFrictionState``); during a step it also writes ``data.qfrc_applied`` of
    the bodies it rubs, and clears it after.

    Plain Python floats rather than numpy, as in ``FloorFriction``: a step has a handful of
    these contacts, where numpy's per-call overhead would dominate.

    Args:
        model: the compiled arena.
        data: its state.
        pushables: for each pushable body, its MuJoCo geom names and whether it is a Cardbox
            (LowFriction material). Their contacts with every geom but ``agent`` and
            ``floor`` must be frictionless in MuJoCo (``condim="1"``).
    """

    def __init__(self, model, data,
                 pushables: Sequence[tuple[Sequence[str], bool]]) -> None:
        import mujoco

        self._model, self._data = model, data
        self._pushable = [False] * model.ngeom
        self._material = [DEFAULT_FRICTION] * model.ngeom
        for geoms, cardbox in pushables:
            for geom in geoms:
                g = int(model.geom(geom).id)
                self._pushable[g] = True
                if cardbox:
                    self._material[g] = LOW_FRICTION
        self._skip = {mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, name)
                      for name in ("agent", "floor")}
        # The side of a contact each geom belongs to: its body if that body moves freely,
        # else -1 - geom (a static geom, its own immovable side).
        self._side = []
        self._dof: dict[int, int] = {}
        for g in range(model.ngeom):
            body = int(model.geom_bodyid[g])
            joint = int(model.body_jntadr[body])
            if model.body_jntnum[body] == 1 and model.jnt_type[joint] == mujoco.mjtJoint.mjJNT_FREE:
                self._side.append(body)
                self._dof[body] = int(model.jnt_dofadr[joint])
            else:
                self._side.append(-1 - g)
        self._inv_mass = {body: 1.0 / float(model.body_mass[body]) for body in self._dof}
        self._inv_inertia = {body: tuple(1.0 / float(v) for v in model.body_inertia[body])
                             for body in self._dof}
        self._dt = float(model.opt.timestep)
        self.state = PairFrictionState()

    def start(self, contacts: ContactRead) -> None:
        """Read the contacts of the world as built."""
        self.after_physics_step(contacts)

    def before_physics_step(self) -> None:
        """Write this step's friction into ``qfrc_applied`` (cleared again after the step)."""
        state = self.state
        if not state.contacts:
            return
        import mujoco

        model, data = self._model, self._data
        for a, b, point, normal, force, mu in state.contacts:
            va = self._point_velocity(a, point)
            vb = self._point_velocity(b, point)
            rx, ry, rz = vb[0] - va[0], vb[1] - va[1], vb[2] - va[2]
            nx, ny, nz = normal
            along = rx * nx + ry * ny + rz * nz
            tx, ty, tz = rx - along * nx, ry - along * ny, rz - along * nz
            slip = math.sqrt(tx * tx + ty * ty + tz * tz)
            if slip <= STILL:
                continue
            tx, ty, tz = tx / slip, ty / slip, tz / slip
            w = self._slip_per_impulse(a, point, (tx, ty, tz)) + self._slip_per_impulse(
                b, point, (tx, ty, tz))
            impulse = min(mu * force * self._dt, slip / w)
            f = impulse / self._dt  # applied for one step
            # On b against its slip, on a with it.
            for side, sign in ((b, -f), (a, f)):
                if side >= 0:
                    mujoco.mj_applyFT(model, data, [sign * tx, sign * ty, sign * tz],
                                      [0.0, 0.0, 0.0], list(point), side, data.qfrc_applied)
                    state.pushed.add(side)

    def after_physics_step(self, contacts: ContactRead) -> None:
        """Clear the applied friction; read this step's contacts of pushable bodies.

        When no pushable body moves (``contacts.bodies_moving`` False) nothing slips and the
        contact scan is skipped. The check follows the physics step, so a body that step set
        moving is already seen.
        """
        data = self._data
        state = self.state
        for body in state.pushed:
            dof = self._dof[body]
            data.qfrc_applied[dof : dof + 6] = 0.0
        state.pushed.clear()
        state.contacts = []
        if not contacts.bodies_moving or not contacts.count:
            return
        pushable, skip, side, material = self._pushable, self._skip, self._side, self._material
        arrays = None
        lumped: dict[tuple[int, int], list[float]] = {}
        for k, (geom1, geom2) in enumerate(contacts.geoms):
            if not (pushable[geom1] or pushable[geom2]) or geom1 in skip or geom2 in skip:
                continue
            if arrays is None:
                arrays = (contacts.rows, contacts.forces, contacts.points, contacts.frames)
            address, forces, points, frames = arrays
            row = address[k]
            if row < 0 or forces[row] <= 0.0:
                continue
            f = forces[row]
            (px, py, pz), (nx, ny, nz) = points[k], frames[k][:3]
            a, b = side[geom1], side[geom2]
            if a > b:  # one orientation per pair: the normal points from a to b
                a, b, nx, ny, nz = b, a, -nx, -ny, -nz
            total = lumped.setdefault((a, b), [0.0] * 8)
            total[0] += f
            total[1] += f * px
            total[2] += f * py
            total[3] += f * pz
            total[4] += f * nx
            total[5] += f * ny
            total[6] += f * nz
            total[7] = 0.5 * (material[geom1] + material[geom2])
        for (a, b), (f, fpx, fpy, fpz, fnx, fny, fnz, mu) in lumped.items():
            norm = math.sqrt(fnx * fnx + fny * fny + fnz * fnz)
            if norm <= 0.0:
                continue
            state.contacts.append((a, b, (fpx / f, fpy / f, fpz / f),
                                   (fnx / norm, fny / norm, fnz / norm), f, mu))

    def _point_velocity(self, body: int, point) -> tuple[float, float, float]:
        """World velocity of the material point of ``body`` at ``point``.

        A free joint's qvel holds the linear velocity of the body frame's origin (world axes)
        and the angular velocity in the body's own axes. A static side does not move.
        """
        if body < 0:
            return (0.0, 0.0, 0.0)
        data = self._data
        dof = self._dof[body]
        vx, vy, vz, lx, ly, lz = data.qvel[dof : dof + 6].tolist()
        m = data.xmat[body].tolist()  # body -> world rotation, row-major
        wx = m[0] * lx + m[1] * ly + m[2] * lz
        wy = m[3] * lx + m[4] * ly + m[5] * lz
        wz = m[6] * lx + m[7] * ly + m[8] * lz
        ox, oy, oz = data.xpos[body].tolist()
        dx, dy, dz = point[0] - ox, point[1] - oy, point[2] - oz
        return (vx + wy * dz - wz * dy, vy + wz * dx - wx * dz, vz + wx * dy - wy * dx)

    def _slip_per_impulse(self, body: int, point, direction) -> float:
        """Velocity change along ``direction`` at ``point`` per unit impulse there (0: static)."""
        if body < 0:
            return 0.0
        data = self._data
        cx, cy, cz = data.xipos[body].tolist()
        dx, dy, dz = point[0] - cx, point[1] - cy, point[2] - cz
        tx, ty, tz = direction
        # u = r x t in world axes, then in the principal (inertial) frame.
        ux, uy, uz = dy * tz - dz * ty, dz * tx - dx * tz, dx * ty - dy * tx
        m = data.ximat[body].tolist()
        lx = m[0] * ux + m[3] * uy + m[6] * uz
        ly = m[1] * ux + m[4] * uy + m[7] * uz
        lz = m[2] * ux + m[5] * uy + m[8] * uz
        ix, iy, iz = self._inv_inertia[body]
        return self._inv_mass[body] + lx * lx * ix + ly * ly * iy + lz * lz * iz
