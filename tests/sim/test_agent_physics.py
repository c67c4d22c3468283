import math

import pytest

from tests.helpers.arenas import arena, obj

# docs/animal-ai-facts.md §1: distance while thrusting from rest, and the extra coast after.
SPEED_TABLE = {1: (0.10, 0.16), 2: (0.34, 0.40), 3: (0.71, 0.64), 5: (1.77, 1.07),
               9: (4.98, 1.75), 15: (11.6, 2.37), 20: (18.2, 2.68), 35: (40.4, 3.06)}


def _settle(sim, steps=5):
    for _ in range(steps):
        sim.step(0, 0)


@pytest.mark.parametrize("steps", sorted(SPEED_TABLE))
def test_go_n_matches_aai_speed_table(physics_sim, steps):
    # Diagonal from a corner: 53 m of free floor, enough for Go(35) plus its coast.
    sim = physics_sim(arena(agent=(1.0, 0.0, 1.0), yaw=45.0))
    _settle(sim)
    x0, _, z0 = sim.state.position
    for _ in range(steps):
        sim.step(1, 0)
    x1, _, z1 = sim.state.position
    _settle(sim, 15)
    x2, _, z2 = sim.state.position
    thrust, coast = SPEED_TABLE[steps]
    assert math.hypot(x1 - x0, z1 - z0) == pytest.approx(thrust, rel=0.05)
    assert math.hypot(x2 - x1, z2 - z1) == pytest.approx(coast, rel=0.05, abs=0.01)
    assert sim.state.velocity == pytest.approx((0, 0, 0), abs=1e-3)  # stopped


def test_speed_follows_the_fact_sheet_recurrence_step_by_step(physics_sim):
    """docs/animal-ai-facts.md §1: per physics step v <- (v + 1) * 0.968, then the floor's Coulomb
    friction removes mu g dt 0.968 = 0.114 m/s. The distance table above allows 5%; this pins
    the friction itself: counting PhysX's damping twice (0.110 m/s) ends Go(9) 0.07 m/s fast."""
    sim = physics_sim(arena(agent=(1.0, 0.0, 1.0), yaw=45.0))
    _settle(sim)
    expected = 0.0
    for _ in range(9):
        sim.step(1, 0)
        for _ in range(3):
            expected = (expected + 1.0) * (1 - 1.6 * 0.02) - 0.6 * 9.81 * 0.02 * (1 - 1.6 * 0.02)
        vx, _, vz = sim.state.velocity
        assert math.hypot(vx, vz) == pytest.approx(expected, abs=5e-3)


def test_go_35_crosses_the_arena(physics_sim):
    sim = physics_sim(arena(agent=(20.0, 0.0, 0.5), yaw=0.0))
    _settle(sim)  # spawned 0.02 m above the floor: no thrust until it lands
    for _ in range(35):
        sim.step(1, 0)
    assert sim.state.position[2] > 39.4  # at the far fence (centre 0.5 from it)


def test_backward_is_as_fast_as_forward(physics_sim):
    sim = physics_sim(arena(yaw=0.0))
    _settle(sim)
    z0 = sim.state.position[2]
    for _ in range(9):
        sim.step(2, 0)
    assert z0 - sim.state.position[2] == pytest.approx(4.98, rel=0.05)


def test_turning_is_6_degrees_per_step_and_keeps_momentum(physics_sim):
    sim = physics_sim(arena(yaw=0.0))
    _settle(sim)
    for _ in range(5):
        sim.step(1, 0)
    sim.step(0, 1)
    assert sim.state.yaw == pytest.approx(6.0)
    vx, _, vz = sim.state.velocity
    assert abs(vx) < 1e-9 and vz > 0  # still sliding along +z: velocity was not rotated
    for _ in range(16):
        sim.step(0, 2)
    assert sim.state.yaw == pytest.approx(270.0)


def test_yaw_zero_faces_plus_z_and_right_turn_is_clockwise(physics_sim):
    sim = physics_sim(arena(yaw=90.0))
    _settle(sim)
    x0 = sim.state.position[0]
    for _ in range(3):
        sim.step(1, 0)
    assert sim.state.position[0] > x0 + 0.5  # yaw 90 faces +x (Unity)
    assert sim.state.local_velocity[2] > 0 and abs(sim.state.local_velocity[0]) < 1e-6


def test_no_thrust_while_airborne_and_falling_is_damped(physics_sim):
    sim = physics_sim(arena(agent=(20.0, 6.0, 20.0)))
    sim.step(1, 0)
    assert not sim.state.grounded
    assert sim.state.velocity[2] == pytest.approx(0.0, abs=1e-9)  # no forward thrust
    for _ in range(30):
        sim.step(0, 0)
    assert sim.state.grounded
    assert sim.state.position[1] == pytest.approx(0.49, abs=0.01)


def test_walls_stop_the_agent(physics_sim):
    sim = physics_sim(arena(obj("Wall", (20, 0, 25), (10, 3, 1)), yaw=0.0))
    for _ in range(20):
        sim.step(1, 0)
    assert sim.state.position[2] == pytest.approx(24.5 - 0.5, abs=0.05)


def _trace_physics_steps(sim, walls=None):
    """Record the agent's MuJoCo-frame (position, velocity) after every physics step.

    Args:
        walls: a list to which the y position and y velocity of the arena's first object (a
            10 t wall, a rigid body as in AAI: a hit at speed moves it by millimetres) are
            appended after every physics step.
    """
    agent, seen = sim._agent, []
    finish = agent.after_physics_step
    model = sim._model
    joint = model.body_jntadr[model.body("body0").id] if walls is not None else None

    def traced(contacts):
        finish(contacts)
        seen.append((agent.position, tuple(float(v) for v in agent.velocity)))
        if joint is not None:
            walls.append((float(sim._data.qpos[model.jnt_qposadr[joint] + 1]),
                          float(sim._data.qvel[model.jnt_dofadr[joint] + 1])))

    agent.after_physics_step = traced
    return seen


def test_a_wall_hit_at_speed_is_pushed_out_in_one_step_without_rebound(physics_sim):
    """PhysX's PGS pass pushes a penetrating body out by 80 % of the depth (at most 10 m/s x dt),
    whatever the floor's friction, and keeps no push-out velocity. MuJoCo's soft contact pushed
    out a quarter of the depth and bounced the agent back at 2.2 m/s after a 15 m/s hit."""
    sim = physics_sim(arena(obj("Wall", (20, 0, 30.5), (10, 3, 1)), agent=(20.0, 0.0, 15.0)))
    _settle(sim)
    walls = []
    seen = _trace_physics_steps(sim, walls)
    for _ in range(25):
        sim.step(1, 0)
    # MuJoCo y of the agent's centre when it touches the wall's face, which the hit moves by
    # a few millimetres (the 10 t wall is a rigid body on the floor, as in AAI)
    touching = [wall_y - 0.5 - 0.5 for wall_y, _ in walls]
    depths = [position[1] - face for (position, _), face in zip(seen, touching, strict=True)]
    hit = next(k for k, depth in enumerate(depths) if depth > 0.01)
    assert seen[hit - 1][1][1] > 10.0  # it arrived fast: a deep first penetration
    out = depths[hit] - min(0.8 * depths[hit], 10.0 * 0.02)
    assert depths[hit + 1] == pytest.approx(out, abs=1e-3)
    for (_, velocity), (_, wall_speed) in zip(seen[hit + 1:], walls[hit + 1:], strict=True):
        # held at the wall, no rebound: at most the wall's own few mm/s
        assert abs(velocity[1]) <= abs(wall_speed) + 1e-3
    assert depths[-1] == pytest.approx(0.0, abs=1e-3)
    assert walls[-1][0] - walls[0][0] < 0.01


def test_a_slow_approach_stops_at_the_wall_without_entering_it(physics_sim):
    """Within the 2 cm contact offset PhysX lets a body close the gap in a step, no further."""
    # 1.5 cm apart; the first thrusting step alone would carry the agent 1.7 cm.
    sim = physics_sim(arena(obj("Wall", (20, 0, 25.5), (10, 3, 1)), agent=(20.0, 0.0, 24.485)))
    _settle(sim)
    walls = []
    seen = _trace_physics_steps(sim, walls)
    for _ in range(3):
        sim.step(1, 0)
    # the agent's centre at the wall's face, which the push moves by micrometres (10 t)
    depths = [position[1] - (wall_y - 0.5 - 0.5)
              for (position, _), (wall_y, _) in zip(seen, walls, strict=True)]
    assert max(depths) <= 1e-6
    assert depths[-1] == pytest.approx(0.0, abs=1e-5)
    assert walls[-1][0] - walls[0][0] < 1e-4


def test_the_agent_rests_on_the_floor_without_sinking_and_stays_grounded(physics_sim):
    sim = physics_sim(arena())
    seen = _trace_physics_steps(sim)
    _settle(sim, 10)
    assert sim.state.grounded
    for position, velocity in seen[6:]:
        assert position[2] == pytest.approx(0.49, abs=1e-9)  # floor top at -0.01
        assert velocity == pytest.approx((0.0, 0.0, 0.0), abs=1e-9)


def test_a_goal_within_the_contact_offset_is_touched(physics_sim):
    """PhysX reports a contact, and Unity calls OnCollisionEnter, within the summed contact
    offsets (2 cm): a ball resting 1.5 cm from the agent is collected without moving."""
    apart = 1.0 + 0.015
    sim = physics_sim(arena(obj("GoodGoal", (20.0 + apart, 0, 20.0), (1, 1, 1))))
    results = [sim.step(0, 0)]
    while not results[-1].done and len(results) < 3:
        results.append(sim.step(0, 0))
    assert results[-1].end_reason == "good_goal"
    far = physics_sim(arena(obj("GoodGoal", (20.0 + 1.03, 0, 20.0), (1, 1, 1))))
    for _ in range(3):
        assert not far.step(0, 0).done


@pytest.mark.parametrize(("height", "climbs"), [(2.0, True), (8.0, False)])
def test_ramps_climbable_up_to_about_45_degrees(physics_sim, height, climbs):
    # Ramp at yaw 180: tall end toward +z, so the agent walking +z climbs it.
    ramp = obj("Ramp", (20, 0, 24), (4, height, 4), yaw=180.0)
    sim = physics_sim(arena(ramp, agent=(20.0, 0.0, 19.0), yaw=0.0))
    for _ in range(25):
        sim.step(1, 0)
    top = sim.state.position[1]
    assert (top > height * 0.6) is climbs


def test_boxes_get_pushed(physics_sim):
    sim = physics_sim(arena(obj("Cardbox1", (20, 0, 23), (1, 1, 1)), yaw=0.0))
    body = sim._model.body("body0").id
    z0 = float(sim._data.xpos[body][1])
    for _ in range(10):
        sim.step(1, 0)
    assert float(sim._data.xpos[body][1]) > z0 + 1.0


def test_friction_is_the_physx_average_of_the_two_materials(physics_sim):
    # Unity: agent, floor, walls, balls and U/L/J blocks have the default material (0.6);
    # Cardboxes have LowFriction (0.25); PhysX averages the pair: 0.6, or 0.425 with a box.
    import mujoco

    sim = physics_sim(arena(obj("Cardbox2", (10.0, 0.0, 10.0), (2, 2, 2)),
                            obj("UObject", (30.0, 0.0, 30.0), (2, 1, 5)),
                            obj("Wall", (10.0, 0.0, 30.0), (2, 2, 2)),
                            obj("GoodGoal", (30.0, 0.0, 10.0), (1, 1, 1))))
    model, agent = sim._model, sim._agent
    by_name = {mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, g): g for g in range(model.ngeom)}
    assert agent.friction_with(by_name["obj0"]) == pytest.approx(0.425)
    assert agent.friction_with(by_name["floor"]) == pytest.approx(0.6)
    for name in ("obj1_0", "obj1_1", "obj1_2", "obj2", "obj3"):
        assert agent.friction_with(by_name[name]) == pytest.approx(0.6), name
    # Object against object: frictionless in MuJoCo (the pushable geom's priority makes its
    # condim 1 win), the friction comes from llm_aai.sim.pair_friction (test_pushing).
    for name in ("obj0", "obj1_0", "obj1_1", "obj1_2"):
        g = by_name[name]
        assert model.geom_condim[g] == 1, name
        assert model.geom_priority[g] > model.geom_priority[by_name["obj2"]], name
        assert model.geom_priority[g] > model.geom_priority[by_name["obj3"]], name
