"""Restitution of the bouncing balls, for the Animal-AI build that gives them a bouncy material.

Which build: the 2019 build the Animal-AI Olympics entrants played gives the bounce balls
(GoodGoalBounce, GoodGoalMultiBounce, BadGoalBounce) a physics material of bounciness 0.8; the
3.x/4.x prefabs carry none, so every collider has Unity's default material, bounciness 0
(docs/animal-ai-facts.md §4, "Bounce per build"). The simulator follows the 3.x build by default,
the one the LLM-AAI paper used (Animal-AI 3.1.3), and applies this correction only when it is
asked for the 2019 build (``Simulator(physics_build="2019")``).

PhysX applies restitution to a contact whose bodies approach faster than the bounce threshold
(AAI: 2 m/s, ``DynamicsManager.asset``): it makes their separating normal speed ``e`` times the
approach speed; slower contacts do not bounce. MuJoCo has no restitution (its soft contacts
are inelastic with the project's settings), so this correction remembers each ball's velocity
before the step and, after it, raises the normal speed at each of the ball's new or
continuing contacts that was approached fast enough to ``e`` times the approach. The other
body keeps what MuJoCo gave it (the balls weigh 1 kg; everything they bounce off is a wall,
a ramp, the floor or another ball).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from llm_aai.sim.corrections import ContactRead

BOUNCINESS = 0.8
"""Bounciness of the 2019 build's bounce-ball material (``BounceBall``); its bounce combine
mode is Maximum, so every contact of the ball bounces with 0.8 whatever the other collider
(docs/animal-ai-facts.md §4)."""
BOUNCE_THRESHOLD = 2.0
"""m/s: PhysX's bounce threshold in AAI (docs/animal-ai-facts.md §2)."""


@dataclass
class BounceState:
    """What the restitution carries from before a physics step to after it.

    Attributes:
        before: each ball's world linear velocity before the step, by ball index.
    """

    before: list[tuple[float, float, float]] = field(default_factory=list)


class Restitution:
    """Makes the bounce balls of one compiled arena bounce with ``BOUNCINESS``.

    A ``PhysicsCorrection`` (``llm_aai.sim.corrections``); its state is ``state``
    (``BounceState``); it writes the balls' linear velocities.

    Args:
        model, data: the compiled arena and its state.
        bodies: the MuJoCo body names of the bounce balls.
    """

    def __init__(self, model, data, bodies: Sequence[str]) -> None:
        self._data = data
        self._bodies = [int(model.body(name).id) for name in bodies]
        self._dofs = [int(model.jnt_dofadr[model.body_jntadr[b]]) for b in self._bodies]
        self._ball_of_geom = {}
        for k, body in enumerate(self._bodies):
            for geom in range(int(model.body_geomadr[body]),
                              int(model.body_geomadr[body] + model.body_geomnum[body])):
                self._ball_of_geom[geom] = k
        self._geom_body = model.geom_bodyid.tolist()
        # Bodies whose first three degrees of freedom are their world linear velocity: free
        # bodies, and the agent (slide joints x, y, z, then its yaw hinge).
        self._free_dof = {
            body: int(model.jnt_dofadr[model.body_jntadr[body]])
            for body in range(1, model.nbody) if model.body_jntnum[body] >= 1
        }
        self.state = BounceState()

    def start(self, contacts: ContactRead) -> None:
        """Nothing to read: a ball bounces from its first contact on."""

    def before_physics_step(self) -> None:
        """Remember each ball's velocity as the contacts will see it."""
        qvel = self._data.qvel
        self.state.before = [tuple(qvel[dof : dof + 3].tolist()) for dof in self._dofs]

    def after_physics_step(self, contacts: ContactRead) -> None:
        """Give each ball that hit something fast enough its bounce."""
        if not contacts.count or not self._bodies:
            return
        qvel = self._data.qvel
        done = set()
        for k, (geom1, geom2) in enumerate(contacts.geoms):
            for geom, other in ((geom1, geom2), (geom2, geom1)):
                ball = self._ball_of_geom.get(geom)
                if ball is None or (ball, other) in done or contacts.rows[k] < 0:
                    continue  # not a ball, seen already, or apart (no constraint)
                done.add((ball, other))
                # MuJoCo's normal points from geom1 to geom2; make it point at the ball.
                nx, ny, nz = contacts.frames[k][:3]
                if geom == geom1:
                    nx, ny, nz = -nx, -ny, -nz
                self._bounce(ball, other, (nx, ny, nz), qvel)

    def _bounce(self, ball: int, other_geom: int, normal, qvel) -> None:
        nx, ny, nz = normal
        ox, oy, oz = self._velocity(self._geom_body[other_geom], qvel)
        bx, by, bz = self.state.before[ball]
        approach = -((bx - ox) * nx + (by - oy) * ny + (bz - oz) * nz)
        if approach <= BOUNCE_THRESHOLD:
            return
        dof = self._dofs[ball]
        vx, vy, vz = qvel[dof : dof + 3].tolist()
        away = (vx - ox) * nx + (vy - oy) * ny + (vz - oz) * nz
        lift = BOUNCINESS * approach - away
        if lift > 0.0 and math.isfinite(lift):
            qvel[dof : dof + 3] = (vx + lift * nx, vy + lift * ny, vz + lift * nz)

    def _velocity(self, body: int, qvel) -> tuple[float, float, float]:
        """World linear velocity of a body (zero for the world and what is welded to it)."""
        dof = self._free_dof.get(body)
        if dof is None:
            return (0.0, 0.0, 0.0)
        return tuple(qvel[dof : dof + 3].tolist())
