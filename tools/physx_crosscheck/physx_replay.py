"""Replay an exported arena and its actions in PhysX 4.1 (SAPIEN 2.2), with AAI's agent logic.

Runs in its own environment (see README.md): ``sapien==2.2.2`` ships PhysX 4.1.1, the
generation Unity 2021.3 (the Animal-AI build) runs, and needs ``numpy<2``. It imports nothing
from ``llm_aai``: ``crosscheck.py`` exports the scene and the per-script actions as JSON and
reads back one line of JSON per script.

What is modelled, from docs/animal-ai-facts.md (sections 1 and 4) and Unity's
``ProjectSettings/DynamicsManager.asset``: 0.02 s steps, PGS with 12/12 iterations, patch
friction (PhysX's default), contact offset 0.01, bounce threshold 2, sleep threshold 0.005;
the agent a 100 kg sphere, drag 1.6, rotation locked, +1 m/s per physics step along its facing
only when grounded, quick stop 0.9 on no-move frames, 2 degrees of yaw per physics step, and
AAI's OnCollisionEnter/Stay/Exit grounded rule; Walls dynamic 10000 kg bodies, the fence
static; Cardboxes with the LowFriction material (0.25); Unity's default material (0.6)
elsewhere. Not available in SAPIEN 2: Unity's max depenetration velocity (10 m/s) and max
angular speed (7 rad/s); PhysX's defaults apply.
"""

from __future__ import annotations

import json
import math
import sys
import warnings

warnings.filterwarnings("ignore")

import numpy as np  # noqa: E402
import sapien.core as sapien  # noqa: E402

PHYSICS_STEPS_PER_ACTION = 3
THRUST = 1.0  # m/s per physics step
QUICK_STOP = 0.9
TURN_DEG = 2.0  # per physics step
AGENT_MASS = 100.0
WALL_MASS = 10000.0


def make_scene():
    """A PhysX scene with Unity's project physics settings (the engine must outlive it)."""
    engine = sapien.Engine()
    config = sapien.SceneConfig()
    config.gravity = np.array([0.0, 0.0, -9.81])
    config.bounce_threshold = 2.0
    config.enable_pcm = True
    config.enable_tgs = False
    config.enable_ccd = False
    config.enable_enhanced_determinism = False
    config.enable_friction_every_iteration = False
    config.enable_adaptive_force = False
    config.contact_offset = 0.01
    config.solver_iterations = 12
    config.solver_velocity_iterations = 12
    config.sleep_threshold = 0.005
    config.default_static_friction = config.default_dynamic_friction = 0.6
    config.default_restitution = 0.0
    scene = engine.create_scene(config)
    scene.set_timestep(0.02)
    return engine, scene


def pose(position, quat=(1.0, 0.0, 0.0, 0.0)):
    """A SAPIEN pose from a position and a (w, x, y, z) quaternion."""
    return sapien.Pose(np.array(position, np.float32), np.array(quat, np.float32))


def build(scene, colliders):
    """Create one PhysX actor per exported collider; return (actors by name, the agent)."""
    default = scene.create_physical_material(0.6, 0.6, 0.0)
    materials = {}
    actors, agent = {}, None
    for c in colliders:
        mu = c["friction"]
        material = default if mu == 0.6 else materials.setdefault(
            mu, scene.create_physical_material(mu, mu, 0.0))
        builder = scene.create_actor_builder()
        half = np.array(c["half_size"])
        if c["shape"] == "sphere":
            volume = 4.0 / 3.0 * math.pi * half[0] ** 3
            builder.add_sphere_collision(radius=float(half[0]), material=material,
                                         density=(c["mass"] or 1.0) / volume)
        else:
            builder.add_box_collision(half_size=half, material=material,
                                      density=(c["mass"] or 1.0) / (8.0 * half.prod()))
        if c["kind"] == "static":
            actor = builder.build_static(name=c["name"])
        else:
            actor = builder.build(name=c["name"])
        actor.set_pose(pose(c["position"], c["quat"]))
        if c["kind"] == "agent":
            actor.set_damping(1.6, 0.05)
            actor.lock_motion(False, False, False, True, True, True)
            agent = actor
        elif c["kind"] != "static":
            actor.set_damping(0.0, 0.05)
        actors[c["name"]] = actor
    return actors, agent


class AgentLogic:
    """AAI's TrainingAgent per physics step: thrust/quick stop when grounded, yaw, grounded flag."""

    def __init__(self, scene, actors, agent, yaw_deg, goals):
        self.scene, self.actors, self.agent = scene, actors, agent
        self.yaw = math.radians(yaw_deg)
        self.goals = goals
        self.grounded = False
        self.last_normal_y = 0.0
        self.events = []
        self.physics_steps = 0
        self.ended = None
        self.impulses = {}  # other body -> normal impulse on the agent in the last step (N s)

    def facing(self):
        """Unit vector the agent faces (Unity yaw is clockwise from +z; MuJoCo y is Unity z)."""
        return np.array([math.sin(self.yaw), math.cos(self.yaw), 0.0])

    def physics_step(self, move, turn):
        """One 0.02 s step: AAI's MoveAgent, PhysX, then the collision callbacks."""
        self.physics_steps += 1
        if self.grounded:
            velocity = np.array(self.agent.get_velocity())
            if move == 1:
                velocity = velocity + THRUST * self.facing()
            elif move == 2:
                velocity = velocity - THRUST * self.facing()
            else:
                velocity = velocity * QUICK_STOP
            self.agent.set_velocity(velocity)
        if turn:
            self.yaw += math.radians(TURN_DEG if turn == 1 else -TURN_DEG)
        # Unity writes the transform's rotation every frame (transform.Rotate).
        half = -self.yaw / 2.0
        facing = (math.cos(half), 0.0, 0.0, math.sin(half))
        self.agent.set_pose(pose(self.agent.get_pose().p, facing))
        self.scene.step()
        self._collision_callbacks()

    def _collision_callbacks(self):
        exited, touched = False, []
        self.impulses = {}
        for contact in self.scene.get_contacts():
            if self.agent not in (contact.actor0, contact.actor1):
                continue
            # SAPIEN's normal points towards actor0.
            sign = 1.0 if contact.actor0 is self.agent else -1.0
            other = contact.actor1 if contact.actor0 is self.agent else contact.actor0
            if contact.ends:
                exited = True
                continue
            if not contact.points:
                continue
            normals_y = [sign * point.normal[2] for point in contact.points]
            self.impulses[other.name] = float(sum(np.linalg.norm(point.impulse)
                                                  for point in contact.points))
            if any(n > 0 for n in normals_y):
                self.grounded = True
            self.last_normal_y = normals_y[-1]
            touched.append(other.name)
        if exited and self.last_normal_y > 0:
            self.grounded = False  # AAI's OnCollisionExit reads the last contact seen
        for name in touched:
            goal = self.goals.get(name)
            if goal is None or name not in self.actors or self.ended:
                continue
            self.events.append({"physics_step": self.physics_steps, "goal": goal["name"]})
            if goal["multi"]:
                self.scene.remove_actor(self.actors.pop(name))
            else:
                self.ended = goal["name"]


def main() -> int:
    """Replay the exported scripts; print one JSON line per script.

    With a second argument N, also print one line per physics step of script N with the
    agent's velocity and the normal impulse each body gave it (SAPIEN reports no friction
    impulses), which is how PhysX's friction wedging along walls was measured.
    """
    with open(sys.argv[1]) as handle:
        spec = json.load(handle)
    watched = int(sys.argv[2]) if len(sys.argv) > 2 else None
    _engine, scene = make_scene()
    actors, agent = build(scene, spec["colliders"])
    logic = AgentLogic(scene, actors, agent, spec["agent_yaw"], spec["goals"])
    for script in spec["scripts"]:
        for move, turn in script["actions"]:
            if logic.ended:
                break
            for _ in range(PHYSICS_STEPS_PER_ACTION):
                logic.physics_step(move, turn)
                if script["index"] == watched:
                    vx, vy, _vz = agent.get_velocity()
                    print(json.dumps({"physics_step": logic.physics_steps, "move": move,
                                      "turn": turn, "vx": float(vx), "vz": float(vy),
                                      "normal_impulses": logic.impulses}), flush=True)
                if logic.ended:
                    break
        x, y, _z = agent.get_pose().p
        print(json.dumps({"script": script["index"], "x": float(x), "z": float(y),
                          "yaw": math.degrees(logic.yaw) % 360.0, "events": logic.events,
                          "ended": logic.ended}), flush=True)
        logic.events = []
    return 0


if __name__ == "__main__":
    sys.exit(main())
