"""The embedded Animal-AI simulator: one object to load an arena, step it and look at it.

This facade ties the pieces together and is all the gymnasium env needs:
``llm_aai.sim.scene`` builds the MuJoCo world, ``llm_aai.sim.agent_physics`` moves the agent
as Unity does, ``llm_aai.sim.rules`` keeps health and reward, ``llm_aai.sim.render`` draws.
It knows nothing of gymnasium, LLMs or files: its input is a ``PlacedArena``.

Time: one ``step()`` is one AAI decision = 3 physics steps of 0.02 s with the same action
(ML-Agents' decision period 3); the observation is taken after those 3 steps.
"""

from __future__ import annotations

import hashlib
import math
import weakref
from dataclasses import dataclass, replace

import numpy as np

from llm_aai.arena.geometry import Sphere, box_sphere_overlap
from llm_aai.arena.objects import Quota
from llm_aai.arena.placement import PlacedArena, PlacedObject
from llm_aai.sim.agent_physics import AGENT_ACTIONS, AgentPhysics
from llm_aai.sim.angular_drag import AngularDrag
from llm_aai.sim.angular_limit import AngularSpeedLimit
from llm_aai.sim.bounce import Restitution
from llm_aai.sim.builds import PHYSICS_BUILDS, game_clock, zone_trigger
from llm_aai.sim.coords import to_unity
from llm_aai.sim.corrections import ContactRead, PhysicsCorrection
from llm_aai.sim.floor_friction import FloorFriction
from llm_aai.sim.pair_friction import PairFriction
from llm_aai.sim.raycast import cast_rays, tag_index_of_geom
from llm_aai.sim.render import ArenaRenderer
from llm_aai.sim.rules import PHYSICS_STEPS_PER_ACTION, Blackouts, RewardEvent, Rules
from llm_aai.sim.scene import AGENT_RADIUS, GoalInfo, build_scene
from llm_aai.sim.sight import Eye, Sight, Sighting, geom_owners
from llm_aai.sim.snapshot import MUTABLE_MODEL_FIELDS, Snapshot, apply, capture
from llm_aai.sim.stability import SimulationUnstable, StabilityWatch
from llm_aai.sim.value_goals import ValueGoal

_SETTINGS = ("resolution", "_render", "_renderer", "_spare", "_sight")
"""Attributes a restore leaves alone: how this simulator draws and sees (the ray caster is
derived from the loaded model, with scratch space of its own), not what the world is."""
OVERVIEW_MAX = 1024
"""Largest overview image; the offscreen buffer is sized for it (and for the eye)."""


SPARE_SNAPSHOTS = 64
"""Most MjData buffers kept for reuse by one simulator (each holds a few megabytes)."""


def _world_fingerprint(model) -> str:
    """What makes two compiled arenas the same world for a snapshot (not how they draw)."""
    digest = hashlib.sha256()
    for array in (model.body_pos, model.body_quat, model.body_mass, model.geom_type,
                  model.geom_size, model.geom_pos, model.geom_quat, model.qpos0):
        digest.update(array.tobytes())
    return digest.hexdigest()


def _keep_spare(spare: list, data) -> None:
    if len(spare) < SPARE_SNAPSHOTS:
        spare.append(data)


@dataclass(frozen=True)
class StepResult:
    """What one AAI step did.

    Attributes:
        reward: sum of this step's rewards (decay, hot zone and events).
        health: health after the step (0-100).
        done: whether the episode has ended.
        end_reason: ``"good_goal"``, ``"bad_goal"``, ``"decoy_goal"``, ``"death_zone"``,
            ``"all_multis"``, ``"health_zero"`` or ``"time_limit"`` on the ending step, else
            None.
        events: this step's reward events (decay and hot zone summed over its physics steps).
    """

    reward: float
    health: float
    done: bool
    end_reason: str | None
    events: tuple[RewardEvent, ...]


@dataclass(frozen=True)
class AgentState:
    """The agent's state in Unity coordinates (y up), as AAI's vector observation has it.

    Attributes:
        position: world (x, y, z) of the sphere centre.
        velocity: world velocity (m/s).
        local_velocity: velocity in the agent's frame (x right, y up, z forward), as in AAI's
            7-float observation.
        yaw: degrees, clockwise from +z seen from above.
        health: 0-100.
        steps: AAI steps taken since load.
        physics_steps: physics steps taken since load (AAI's StepCount).
        grounded: the agent touched something below its centre on the last physics step.
    """

    position: tuple[float, float, float]
    velocity: tuple[float, float, float]
    local_velocity: tuple[float, float, float]
    yaw: float
    health: float
    steps: int
    physics_steps: int
    grounded: bool


def _free_dofs(model, pushables) -> np.ndarray:
    """The six degrees of freedom of every pushable body's free joint."""
    dofs = []
    for pushable in pushables:
        body = model.body(pushable.body).id
        first = int(model.jnt_dofadr[model.body_jntadr[body]])
        dofs += range(first, first + 6)
    return np.array(dofs, dtype=np.intp)


def _timings(placed: PlacedArena, index: int):
    """A changing goal's timings, which the placer always sets."""
    obj = placed.objects[index]
    if obj.timings is None:
        raise ValueError(f"{obj.spec.name} (item {obj.item_index}, instance "
                         f"{obj.instance_index}) has no timings: place it with place_arena")
    return obj.timings


@dataclass
class _Goal:
    info: GoalInfo
    body: int
    dof: int  # first dof of its free joint


class Simulator:
    """An Animal-AI world on MuJoCo, reusable across arenas.

    Args:
        resolution: side of the square first-person image (64-1024 px).
        render: False skips everything OpenGL (physics-only runs, tests, benchmarks);
            ``observe`` and ``render_overview`` then raise.
        physics_build: which Animal-AI build's physics to follow, one of ``PHYSICS_BUILDS``.
    """

    def __init__(self, resolution: int = 512, *, render: bool = True,
                 physics_build: str = "3.x") -> None:
        if not 64 <= int(resolution) <= OVERVIEW_MAX:
            raise ValueError(f"resolution must be in [64, {OVERVIEW_MAX}], got {resolution}")
        if physics_build not in PHYSICS_BUILDS:
            raise ValueError(f"physics_build must be one of {PHYSICS_BUILDS}, "
                             f"got {physics_build!r}")
        self.resolution = int(resolution)
        self.physics_build = physics_build
        self._render = render
        self._renderer = None
        self._model = None
        self._data = None
        self._agent: AgentPhysics | None = None
        self._corrections: list[PhysicsCorrection] = []
        self._contacts: ContactRead | None = None
        self._rules: Rules | None = None
        self._watch: StabilityWatch | None = None
        self._failure: SimulationUnstable | None = None
        self._steps = 0
        self._world = ""
        self._spare: list = []  # MjData of snapshots that were let go, reused by snapshot()
        self._sight: Sight | None = None
        self._objects: tuple = ()
        self._touched: frozenset[int] = frozenset()
        self._changing: dict = {}  # geom -> ValueGoal of each DecayGoal and RipenGoal

    # ----------------------------------------------------------------- lifecycle
    def load(self, placed: PlacedArena, rng: np.random.Generator) -> None:
        """Build the world of ``placed`` and reset the episode.

        Args:
            placed: the arena with every random choice already made by the placer.
            rng: accepted for the backend contract; the placer has already drawn every
                random value AAI draws (colours, sizes, bounce yaws), so building the world
                itself is deterministic and does not consume it.
        """
        import mujoco

        del rng  # every random draw happened in place_arena; see the docstring
        scene = build_scene(placed, resolution=self.resolution)
        model = mujoco.MjModel.from_xml_string(scene.xml, scene.assets)
        data = mujoco.MjData(model)
        self._world = _world_fingerprint(model)
        self._spare = []
        for bounce in scene.bounces:
            dof = int(model.jnt_dofadr[model.body_jntadr[model.body(bounce.body).id]])
            data.qvel[dof : dof + 3] = bounce.velocity  # AAI's 10 m/s kick at Start
        self._model, self._data = model, data
        self._agent = AgentPhysics(model, data, scene.agent_yaw)
        # Run in this order around every physics step (llm_aai.sim.corrections).
        self._corrections = [
            self._agent,
            FloorFriction(model, data, [(p.body, p.geoms) for p in scene.pushables]),
            PairFriction(model, data, [(p.geoms, p.cardbox) for p in scene.pushables]),
            AngularDrag(model, data, [goal.body for goal in scene.goals]),
            AngularSpeedLimit(model, data, [p.body for p in scene.pushables]),
        ]
        if self.physics_build == "2019":
            self._corrections.append(Restitution(model, data, [b.body for b in scene.bounces]))
        self._contacts = ContactRead(model, data, _free_dofs(model, scene.pushables))
        self._goals = {
            mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, goal.geom): _Goal(
                goal,
                model.body(goal.body).id,
                int(model.jnt_dofadr[model.body_jntadr[model.body(goal.body).id]]),
            )
            for goal in scene.goals
        }
        self._changing = {
            geom: ValueGoal(_timings(placed, g.info.index), g.info.spec.color,
                            g.info.spec.final_color)
            for geom, g in self._goals.items() if g.info.spec.change == "value"
        }
        self._zones = [
            replace(zone, box=zone_trigger(zone.box, zone.name, self.physics_build))
            for zone in scene.zones
        ]
        self._placed = placed
        self._objects, self._sight = tuple(placed.objects), None
        self._geom_owner = geom_owners(model)
        self._touched = frozenset()
        arena = placed.arena
        good = sum(1 for obj in placed.objects if obj.spec.is_good_goal)
        bad_multis = sum(1 for obj in placed.objects if obj.spec.quota is Quota.BAD_MULTIS)
        clock = game_clock(self.physics_build)
        self._rules = Rules(arena.time_limit, good, bad_multis=bad_multis,
                            health_ends=clock.health_ends,
                            steps_per_unit=clock.steps_per_unit, hot_floor=clock.hot_floor)
        self._blackouts = Blackouts(arena.blackouts, steps_per_unit=clock.steps_per_unit)
        self._steps = 0
        where = str(arena.location.file) if arena.location else "<arena>"
        self._watch = StabilityWatch(model, data, where, self._describe_body(model, placed))
        self._failure = None
        mujoco.mj_forward(model, data)
        self._contacts.new_step(rescan=True)
        for correction in self._corrections:
            correction.start(self._contacts)
        if self._render:
            if self._renderer is None:
                self._renderer = ArenaRenderer()
            self._renderer.bind(model)

    def close(self) -> None:
        """Release the renderer (the simulator can still be garbage-collected without it)."""
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None

    # ----------------------------------------------------------------- snapshots
    def snapshot(self) -> Snapshot:
        """An exact copy of the episode's state now (see ``llm_aai.sim.snapshot``).

        Restoring it with ``restore`` and taking the same actions gives bit-identical states,
        rewards and frames. It can be restored into this simulator or into another one
        loaded with the same placed arena (rendering or not).
        """
        import mujoco

        self._require_loaded()
        model = self._model
        # A new MjData costs about a millisecond (MuJoCo clears megabytes for it), a copy
        # into one a few microseconds: the buffers of snapshots let go are kept for reuse.
        copy = self._spare.pop() if self._spare else mujoco.MjData(model)
        mujoco.mj_copyData(copy, model, self._data)
        fields = tuple((name, getattr(model, name).copy()) for name in MUTABLE_MODEL_FIELDS)
        # this simulator's own settings are not the episode's state
        python = capture(self, self._bindings(), skip=_SETTINGS)
        snapshot = Snapshot(self._world, copy, fields, python)
        weakref.finalize(snapshot, _keep_spare, self._spare, copy)
        return snapshot

    def restore(self, snapshot: Snapshot) -> None:
        """Put the episode back to ``snapshot`` exactly (a snapshot of this arena's world).

        Raises:
            RuntimeError: no arena loaded.
            ValueError: the snapshot was taken in a different world (another arena or
                placement).
        """
        import mujoco

        self._require_loaded()
        if snapshot.world != self._world:
            raise ValueError("this snapshot is of a different world (another arena or "
                             "placement) than the one loaded")
        model = self._model
        mujoco.mj_copyData(self._data, model, snapshot.data)
        for name, values in snapshot.model_fields:
            getattr(model, name)[...] = values
        apply(self, snapshot.python)

    def _bindings(self) -> set[int]:
        """Objects a snapshot refers to instead of copying (restored by other means)."""
        return {id(self._model), id(self._data), id(self._renderer)}

    # ----------------------------------------------------------------- stepping
    def step(self, move: int, turn: int, *,
             physics_steps: int = PHYSICS_STEPS_PER_ACTION) -> StepResult:
        """Advance one AAI step (3 physics steps) with ``move`` {0,1,2} and ``turn`` {0,1,2}.

        ``physics_steps`` is ML-Agents' decision period: AAI's default is 3, and the
        ``animalai`` package lets users choose another (``decisionPeriod``); the time limit
        and blackouts count physics steps, so they do not depend on it.

        Raises:
            RuntimeError: no arena loaded, or the episode already ended (load again).
            ValueError: an action outside AAI's 3 x 3 branches.
            SimulationUnstable: the physics diverged (see ``llm_aai.sim.stability``); raised
                again on every later step until the next ``load``.
        """
        rules, agent = self._require_loaded()
        if move not in AGENT_ACTIONS or turn not in AGENT_ACTIONS:
            raise ValueError(f"actions are 0, 1 or 2 per branch; got move={move}, turn={turn}")
        if self._failure is not None:
            raise self._failure
        if rules.done:
            raise RuntimeError("the episode has ended; load() the arena again")
        self._steps += 1
        start = rules.total_reward
        decay = hot = 0.0
        events: list[RewardEvent] = []
        agent.command(move, turn)
        touched: set[int] = set()
        for _ in range(physics_steps):
            self._change_goals()
            self._physics_step()
            touched.update(self._geom_owner.get(geom, -2) for geom in agent.touching)
            in_hot, in_death = self._zone_overlap()
            step_decay, step_hot = rules.tick(in_hot)
            decay, hot = decay + step_decay, hot + step_hot
            for geom in agent.touching:
                goal = self._goals.get(geom)
                if goal is not None and not rules.done:
                    spec = goal.info.spec
                    changing = self._changing.get(geom)
                    worth = goal.info.reward if changing is None else changing.value
                    paid = rules.touch_goal(goal.info.name, worth, multi=spec.multi,
                                            quota=spec.quota)
                    events.append(RewardEvent(goal.info.name, paid, self._steps))
                    if spec.multi:
                        self._remove(goal)
            if in_death and not rules.done:
                events.append(RewardEvent("DeathZone", rules.enter_death_zone(), self._steps))
            if rules.done:
                break
        self._touched = frozenset(touched - {-2})
        summary = [RewardEvent("decay", decay, self._steps)] if decay else []
        if hot:
            summary.append(RewardEvent("hot_zone", hot, self._steps))
        return StepResult(
            reward=rules.total_reward - start,
            health=rules.health,
            done=rules.done,
            end_reason=rules.end_reason,
            events=tuple(summary + events),
        )

    def _change_goals(self) -> None:
        """Unity's FixedUpdate of the changing goals, before the physics step it precedes."""
        for geom, goal in self._changing.items():
            goal.fixed_update()
            self._model.geom_rgba[geom, :3] = goal.color

    def goal_value(self, index: int) -> float | None:
        """What the goal of placed-object ``index`` would pay if touched now (None: no goal).

        A changing goal's value moves over the episode (``llm_aai.sim.value_goals``); other
        goals pay their signed diameter.
        """
        self._require_loaded()
        for geom, goal in self._goals.items():
            if goal.info.index == index:
                changing = self._changing.get(geom)
                return goal.info.reward if changing is None else changing.value
        return None

    def _physics_step(self) -> None:
        """One MuJoCo step with every physics correction around it."""
        import mujoco

        corrections, contacts = self._corrections, self._contacts
        for correction in corrections:
            correction.before_physics_step()
        mujoco.mj_step(self._model, self._data)
        self._check_stable()
        contacts.new_step()
        for correction in corrections:
            correction.after_physics_step(contacts)

    def _check_stable(self) -> None:
        try:
            self._watch.check(self._rules.physics_steps * self._model.opt.timestep)
        except SimulationUnstable as error:
            self._failure = error
            raise

    @staticmethod
    def _describe_body(model, placed: PlacedArena):
        """A function naming the placed object behind a MuJoCo body id (for error messages)."""

        def describe(body: int) -> str:
            import mujoco

            name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, body) or ""
            if name == "agent":
                return f"the Agent at {placed.agent.position}"
            if name.startswith("body") and name[4:].isdigit():
                obj = placed.objects[int(name[4:])]
                return (f"{obj.spec.name} (item {obj.item_index}, instance {obj.instance_index}) "
                        f"spawned at {tuple(round(v, 3) for v in obj.position)}")
            return f"body {name or body}"

        return describe

    @property
    def physics_warnings(self) -> dict[str, int]:
        """MuJoCo warnings raised since load (name -> count); empty for a healthy episode."""
        self._require_loaded()
        return self._watch.warnings()

    def _zone_overlap(self) -> tuple[bool, bool]:
        """Whether the agent overlaps a hot zone and a death zone (Unity trigger test)."""
        if not self._zones:
            return False, False
        sphere = Sphere(to_unity(self._agent.position), AGENT_RADIUS)
        hot = death = False
        for zone in self._zones:
            if box_sphere_overlap(zone.box, sphere):
                if zone.spec.ends_episode:
                    death = True
                else:
                    hot = True
        return hot, death

    def _remove(self, goal: _Goal) -> None:
        """A collected multi goal disappears: no collisions, invisible, parked in place."""
        model, data = self._model, self._data
        geom = model.body_geomadr[goal.body]
        model.geom_contype[geom] = 0
        model.geom_conaffinity[geom] = 0
        model.geom_rgba[geom, 3] = 0.0
        model.body_gravcomp[goal.body] = 1.0
        data.qvel[goal.dof : goal.dof + 6] = 0.0

    # ----------------------------------------------------------------- observing
    def observe(self) -> np.ndarray:
        """The first-person view, ``(resolution, resolution, 3)`` uint8; black in a blackout."""
        self._require_loaded()
        renderer = self._require_renderer()
        if self._blackouts.dark(self._rules.physics_steps):
            return np.zeros((self.resolution, self.resolution, 3), dtype=np.uint8)
        return renderer.eye(self._data, self.resolution)

    def render_overview(self, size: int = 512) -> np.ndarray:
        """A top-down image of the arena (Unity +z up, +x right), ``(size, size, 3)`` uint8."""
        self._require_loaded()
        if not 64 <= size <= OVERVIEW_MAX:
            raise ValueError(f"overview size must be in [64, {OVERVIEW_MAX}], got {size}")
        return self._require_renderer().overview(self._data, size)

    def cast_rays(self, angles: list[float]) -> list:
        """The agent's ray perception along ``angles`` (see ``llm_aai.sim.raycast``)."""
        self._require_loaded()
        agent_body = self._model.body("agent").id
        return cast_rays(self._model, self._data, to_unity(self._agent.position),
                         self._agent.yaw, angles, exclude_body=agent_body,
                         tag_of_geom=lambda geom: tag_index_of_geom(self._model, self._placed,
                                                                    geom))
    def look(self) -> tuple[Eye, list[Sighting]]:
        """What the eye sees now, as data (``llm_aai.sim.sight``), and where it looks from.

        Works with ``render=False``: visibility is ray cast, not drawn. The lights do not
        matter here; whoever words it checks ``dark``.
        """
        self._require_loaded()
        sight = self.sight
        return sight.eye(self._data), sight.look(self._data)

    def layout(self) -> tuple[Eye, tuple[PlacedObject, ...], list[tuple[float, float, float]]]:
        """The whole arena as data, seen or not: the eye, every placed object, its centre now.

        A collected yellow ball is left out (it is gone from the world).
        """
        self._require_loaded()
        centres = self.sight.centres(self._data)
        gone = {g.info.index for g in self._goals.values()
                if self._model.geom_rgba[self._model.body_geomadr[g.body], 3] == 0}
        keep = [i for i in range(len(self._objects)) if i not in gone]
        return (self.sight.eye(self._data), tuple(self._objects[i] for i in keep),
                [centres[i] for i in keep])

    @property
    def sight(self) -> Sight:
        """The eye's ray caster for the loaded arena (built on first use)."""
        self._require_loaded()
        if self._sight is None:
            self._sight = Sight(self._model, self._objects)
        return self._sight

    @property
    def objects(self) -> tuple[PlacedObject, ...]:
        """The loaded arena's placed objects; their indices name what ``touched`` reports."""
        self._require_loaded()
        return self._objects

    @property
    def touched(self) -> frozenset[int]:
        """What the agent touched during the last step: placed-object indices, -1 the fence.

        The floor is not counted. For analysis (plan metrics: walls and fences hit), not
        for the agent, which feels nothing but sees and reads its health.
        """
        self._require_loaded()
        return self._touched

    @property
    def health(self) -> float:
        """Current health, 0-100."""
        return self._require_loaded()[0].health

    @property
    def done(self) -> bool:
        """Whether the episode has ended."""
        return self._require_loaded()[0].done

    @property
    def end_reason(self) -> str | None:
        """Why the episode ended (see ``StepResult.end_reason``), or None while it runs."""
        return self._require_loaded()[0].end_reason

    @property
    def total_reward(self) -> float:
        """The episode's return so far."""
        return self._require_loaded()[0].total_reward

    @property
    def dark(self) -> bool:
        """Whether the lights are off (a blackout) right now."""
        return self._blackouts.dark(self._require_loaded()[0].physics_steps)

    @property
    def state(self) -> AgentState:
        """The agent's position, velocity, yaw, health and step counts (Unity coordinates)."""
        rules, agent = self._require_loaded()
        velocity = to_unity(agent.velocity)
        theta = math.radians(agent.yaw)
        cos, sin = math.cos(theta), math.sin(theta)
        local = (velocity[0] * cos - velocity[2] * sin, velocity[1],
                 velocity[0] * sin + velocity[2] * cos)
        return AgentState(
            position=to_unity(agent.position),
            velocity=velocity,
            local_velocity=local,
            yaw=agent.yaw,
            health=rules.health,
            steps=self._steps,
            physics_steps=rules.physics_steps,
            grounded=agent.grounded,
        )

    def _require_loaded(self) -> tuple[Rules, AgentPhysics]:
        if self._rules is None or self._agent is None:
            raise RuntimeError("no arena loaded: call load(placed, rng) first")
        return self._rules, self._agent

    def _require_renderer(self):
        if self._renderer is None:
            raise RuntimeError("this Simulator was created with render=False")
        return self._renderer

