from dataclasses import replace

import mujoco
import numpy as np
import pytest

from llm_aai.arena.objects import OBJECTS, Kind
from llm_aai.arena.timings import GoalTimings
from llm_aai.sim import SimulationUnstable, Simulator, StepResult
from llm_aai.sim.scene import build_scene
from tests.helpers.arenas import arena, obj

EVERY_KIND = (
    obj("Wall", (5, 0, 5), (2, 2, 1), color=(1, 0, 1)),
    obj("WallTransparent", (10, 0, 5), (2, 2, 1)),
    obj("Ramp", (15, 0, 5), (3, 1, 4), yaw=30),
    obj("CylinderTunnel", (25, 0, 30), (4, 4, 6), yaw=90),
    obj("CylinderTunnelTransparent", (30, 0, 10), (3, 3, 3)),
    obj("Cardbox1", (5, 0, 15), (1, 1, 1)),
    obj("Cardbox2", (8, 0, 15), (2, 2, 2), yaw=45),
    obj("UObject", (13, 0, 15), (2, 1, 5)),  # 6 m long along x: spans x 10-16
    obj("LObject", (21, 0, 15), (2, 1, 5)),
    obj("LObject2", (5, 0, 25), (2, 1, 5)),
    obj("DeathZone", (35, 0, 35), (3, 0.5, 3)),
    obj("HotZone", (35, 0, 25), (3, 0.5, 3)),
    obj("GoodGoal", (10, 0, 35), (1, 1, 1)),
    obj("GoodGoalBounce", (14, 0, 35), (1, 1, 1), yaw=90),
    obj("GoodGoalMulti", (18, 0, 35), (1, 1, 1)),
    obj("GoodGoalMultiBounce", (22, 0, 35), (1, 1, 1), yaw=180),
    obj("BadGoal", (26, 0, 35), (1, 1, 1)),
    obj("BadGoalBounce", (30, 0, 35), (1, 1, 1), yaw=270),
)


NEWER_GOALS = (
    obj("BadGoalMulti", (5, 0, 35), (1, 1, 1)),
    obj("DecoyGoal", (5, 0, 30), (1, 1, 1)),
    obj("DecoyGoalBounce", (35, 0, 15), (1, 1, 1), yaw=90),
    obj("DecoyGoalMulti", (35, 0, 20), (1, 1, 1)),
)
"""Objects of today's Animal-AI that the testbed never uses (tests/sim/test_decoys.py)."""
CHANGING_GOALS = tuple(
    replace(obj(name, position, (2.997,) * 3), timings=GoalTimings(3.0, 0.5, -0.005, 0.0))
    for name, position in (("DecayGoal", (35, 0, 25)), ("RipenGoal", (35, 0, 30)))
)
"""Goals whose value changes (tests/sim/test_value_goals.py), as the placer makes them."""


def test_every_object_builds():
    names = {o.spec.name for o in EVERY_KIND + NEWER_GOALS + CHANGING_GOALS}
    assert names == {n for n, s in OBJECTS.items() if s.kind is not Kind.AGENT}
    scene = build_scene(arena(*NEWER_GOALS, *CHANGING_GOALS))
    mujoco.MjModel.from_xml_string(scene.xml, scene.assets)
    assert len(scene.goals) == 6 and len(scene.bounces) == 1


def test_every_testbed_object_builds():
    scene = build_scene(arena(*EVERY_KIND))
    model = mujoco.MjModel.from_xml_string(scene.xml, scene.assets)
    assert len(scene.goals) == 6 and len(scene.zones) == 2 and len(scene.bounces) == 3
    zone = model.geom("obj10")
    assert zone.contype[0] == 0 and zone.conaffinity[0] == 0  # zones never collide


def test_every_kind_arena_spawns_without_overlaps():
    # The placer never overlaps objects; a hand-made arena must not either (see below).
    scene = build_scene(arena(*EVERY_KIND, agent=(20.0, 0.0, 5.0)))
    model = mujoco.MjModel.from_xml_string(scene.xml, scene.assets)
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    deep = [(model.geom(c.geom[0]).name, model.geom(c.geom[1]).name)
            for c in (data.contact[k] for k in range(data.ncon)) if c.dist < -0.005]
    assert deep == []


def test_diverging_physics_raises_instead_of_silently_resetting(physics_sim, tmp_path,
                                                                monkeypatch):
    monkeypatch.chdir(tmp_path)  # MuJoCo appends its warning to ./MUJOCO_LOG.TXT
    # A body at an absurd speed, as a solver blow-up leaves it (set by hand here: the
    # contact fixes of llm_aai.sim.floor_friction removed the spawn overlap that used to do
    # it). MuJoCo would then quietly reset the world; the simulator must say so, naming the
    # object, and refuse to go on.
    sim = physics_sim(arena(obj("UObject", (12, 0, 15), (2, 1, 5)),
                            obj("LObject", (16, 0, 15), (2, 1, 5))))
    sim.step(0, 0)
    sim._data.qvel[sim._model.body("body1").dofadr[0]] = 1e11
    with pytest.raises(SimulationUnstable, match=r"LObject \(item 0, instance 0\)") as info:
        for _ in range(5):
            sim.step(0, 0)
    assert info.value.warning == "mjWARN_BADQVEL" and 0 < info.value.time < 1.0
    assert "QVEL" in (tmp_path / "MUJOCO_LOG.TXT").read_text()
    with pytest.raises(SimulationUnstable):
        sim.step(0, 0)  # the episode is void from then on


def test_nan_state_is_reported_with_its_owner(physics_sim, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    sim = physics_sim(arena(obj("Cardbox1", (20, 0, 25), (1, 1, 1))))
    sim.step(0, 0)
    assert sim.physics_warnings == {}
    sim._data.qvel[sim._model.body("body0").dofadr[0]] = float("nan")
    with pytest.raises(SimulationUnstable, match="Cardbox1"):
        sim.step(0, 0)


def test_ramp_mesh_sits_where_placed():
    scene = build_scene(arena(obj("Ramp", (15, 0, 5), (3, 1, 4))))
    model = mujoco.MjModel.from_xml_string(scene.xml, scene.assets)
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    geom = model.geom("obj0").id
    vert = model.mesh_vert[model.mesh_vertadr[0]: model.mesh_vertadr[0] + model.mesh_vertnum[0]]
    world = data.geom_xpos[geom] + vert @ data.geom_xmat[geom].reshape(3, 3).T
    assert world.min(axis=0) == pytest.approx((13.5, 3.0, 0.01), abs=1e-6)
    assert world.max(axis=0) == pytest.approx((16.5, 7.0, 1.01), abs=1e-6)
    tall = world[world[:, 2] > 0.5]
    assert tall[:, 1] == pytest.approx(3.0)  # tall end on Unity -z at yaw 0


def test_agent_drives_through_a_tunnel(physics_sim):
    tunnel = obj("CylinderTunnel", (20, 0, 26), (4, 4, 6))
    sim = physics_sim(arena(tunnel, agent=(20.0, 0.0, 20.0)))
    for _ in range(16):
        sim.step(1, 0)
    assert sim.state.position[2] > 29.5  # passed the whole 6 m tube


def test_multi_goal_is_collected_once_and_disappears(physics_sim):
    multis = (obj("GoodGoalMulti", (20, 0, 23), (0.999,) * 3),
              obj("GoodGoalMulti", (5, 0, 5), (0.999,) * 3))
    sim = physics_sim(arena(*multis, t=1000))
    collected = []
    for _ in range(12):
        result = sim.step(1, 0)
        collected += [e for e in result.events if e.kind == "GoodGoalMulti"]
    assert [e.reward for e in collected] == [pytest.approx(0.999)]
    assert not sim.done
    geom = sim._model.geom("obj0")
    assert int(geom.contype[0]) == 0 and float(np.ravel(geom.rgba)[3]) == 0.0


def test_good_goal_ends_with_its_size_as_reward(physics_sim):
    sim = physics_sim(arena(obj("GoodGoal", (20, 0, 23), (2.997, 2.997, 2.997)), t=250))
    for _ in range(10):
        result = sim.step(1, 0)
        if result.done:
            break
    assert result.end_reason == "good_goal"
    assert [e.reward for e in result.events if e.kind == "GoodGoal"] == [pytest.approx(2.997)]


def test_death_zone_and_hot_zone(physics_sim):
    sim = physics_sim(arena(obj("HotZone", (20, 0, 20), (4, 0.5, 4)), t=250))
    result = sim.step(0, 0)
    hot = [e for e in result.events if e.kind == "hot_zone"]
    assert hot and hot[0].reward == pytest.approx(3 * -2 / 250)
    sim = physics_sim(arena(obj("DeathZone", (20, 0, 24), (4, 0.5, 2)), t=250))
    for _ in range(8):
        result = sim.step(1, 0)
        if result.done:
            break
    assert result.end_reason == "death_zone"


def test_bounce_balls_move_and_raised_balls_fall(physics_sim):
    sim = physics_sim(arena(obj("GoodGoalBounce", (10, 0, 10), (1, 1, 1), yaw=90),
                            obj("BadGoal", (30, 4, 30), (1, 1, 1))))
    model, data = sim._model, sim._data
    start = data.xpos[model.body("body0").id].copy()
    high = float(data.xpos[model.body("body1").id][2])
    for _ in range(30):
        sim.step(0, 0)
    moved = data.xpos[model.body("body0").id] - start
    assert moved[0] > 5.0 and abs(moved[1]) < 0.2  # yaw 90: along Unity +x
    assert high > 4.0 and data.xpos[model.body("body1").id][2] == pytest.approx(0.49, abs=0.02)


def test_step_validation_and_end(physics_sim):
    sim = physics_sim(arena(obj("DeathZone", (20, 0, 20), (4, 0.5, 4))))
    with pytest.raises(ValueError):
        sim.step(3, 0)
    result = sim.step(0, 0)
    assert isinstance(result, StepResult) and result.done
    with pytest.raises(RuntimeError):
        sim.step(0, 0)
    with pytest.raises(RuntimeError):
        sim.observe()  # render=False
    with pytest.raises(RuntimeError):
        Simulator(render=False).step(0, 0)


def _run(seed, render):
    placed = arena(*EVERY_KIND, agent=(20.0, 0.0, 5.0), t=500, blackouts=(-2,))
    sim = Simulator(96, render=render)
    rng = np.random.default_rng(seed)
    sim.load(placed, rng)
    actions = np.random.default_rng(seed).integers(0, 3, size=(80, 2))
    states, frames = [], []
    for k, (move, turn) in enumerate(actions):
        result = sim.step(int(move), int(turn))
        states.append((sim.state, result))
        if render and k % 20 == 0:
            frames.append(sim.observe())
        if result.done:
            break
    positions = [(b, sim._data.xpos[b].copy()) for b in range(sim._model.nbody)]
    sim.close()
    return states, frames, positions


def test_deterministic_states_and_frames():
    a_states, a_frames, a_pos = _run(3, render=True)
    b_states, b_frames, b_pos = _run(3, render=True)
    assert a_states == b_states
    assert all(np.array_equal(x, y) for x, y in zip(a_frames, b_frames, strict=True))
    assert all(np.array_equal(x[1], y[1]) for x, y in zip(a_pos, b_pos, strict=True))


def test_observation_shape_and_blackout():
    sim = Simulator(64)
    sim.load(arena(obj("GoodGoal", (20, 0, 24), (1, 1, 1)), blackouts=(1, 2)),
             np.random.default_rng(0))
    frame = sim.observe()
    assert frame.shape == (64, 64, 3) and frame.dtype == np.uint8 and frame.max() > 0
    sim.step(0, 0)
    sim.step(0, 0)  # 6 physics steps >= 5: lights off
    assert sim.dark and not sim.observe().any()
    for _ in range(2):
        sim.step(0, 0)  # 12 >= 10: lights back on
    assert sim.observe().any()
    overview = sim.render_overview(128)
    assert overview.shape == (128, 128, 3) and overview.any()
    sim.close()


def test_first_person_view_orientation():
    # Agent at (2, 0, 2) facing +z with a green ball ahead and a magenta wall to its right:
    # the ball must be centred and the wall on the right half (Unity: yaw 0 faces +z).
    sim = Simulator(128)
    sim.load(arena(obj("GoodGoal", (2, 0, 6), (1, 1, 1)),
                   obj("Wall", (6, 0, 2), (1, 3, 6), color=(1, 0, 1)),
                   agent=(2.0, 0.0, 2.0)), np.random.default_rng(0))
    frame = sim.observe().astype(int)
    magenta = (frame[..., 0] > 150) & (frame[..., 1] < 80) & (frame[..., 2] > 150)
    green = (frame[..., 1] > frame[..., 0] + 30) & (frame[..., 1] > frame[..., 2] + 30)
    assert magenta[:, 64:].sum() > 10 * max(magenta[:, :64].sum(), 1)
    cols = np.nonzero(green)[1]
    assert cols.size > 10 and abs(cols.mean() - 64) < 6
    sim.close()
