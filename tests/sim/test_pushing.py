"""The agent pushing Cardboxes across flat ground: what rigid-body physics makes necessary.

Facts used (docs/animal-ai-facts.md sections 1 and 4): agent 100 kg, Cardbox1 1 kg and
Cardbox2 2 kg, Cardbox LowFriction 0.25 against the default 0.6, which PhysX averages to
0.425 against the floor. The boxes here are 1 m cubes: their centre is at the agent's centre
height (0.49 m), so the agent's push passes through their centre of mass and nothing can tip
or lift them.
"""


import numpy as np
import pytest

from llm_aai.arena.objects import lookup
from llm_aai.sim.scene import AGENT_MASS
from tests.helpers.arenas import arena, obj

G = 9.81
BOX_FLOOR_MU = 0.425  # PhysX average of LowFriction (0.25) and the default material (0.6)
START_Z, BOX_Z = 5.0, 16.0  # the agent reaches full speed (~19 m/s) before the box
THRUST, COAST = 15, 30


def _run(physics_sim, *objects, agent_x=20.0):
    """Go(THRUST) then coast; per AAI step: agent z, agent vz, every box's centre (MuJoCo
    frame, z up) and whether the agent touched a box."""
    sim = physics_sim(arena(*objects, agent=(agent_x, 0.0, START_Z), yaw=0.0))
    for _ in range(5):  # land: spawned 0.02 m above the floor
        sim.step(0, 0)
    bodies = [sim._model.body(f"body{i}").id for i in range(len(objects))]
    rest = [sim._data.xpos[b].copy() for b in bodies]
    trace = []
    for k in range(THRUST + COAST):
        sim.step(1 if k < THRUST else 0, 0)
        boxes = [sim._data.xpos[b].copy() for b in bodies]
        trace.append((sim.state.position[2], sim.state.velocity[2], boxes,
                      bool(set(sim._agent.touching) - {0})))
    return sim, rest, trace


def _max_rise(rest, trace):
    """Largest height gain of each box centre (MuJoCo z is up) over the run."""
    return [max(float(boxes[k][2]) - rest[k][2] for _, _, boxes, _ in trace)
            for k in range(len(rest))]


def test_a_box_pushed_at_full_speed_stays_on_the_floor(physics_sim):
    box = obj("Cardbox1", (20.0, 0.0, BOX_Z), (1, 1, 1))
    sim, rest, trace = _run(physics_sim, box)
    # The push is horizontal and through the centre of mass: no force can lift the box.
    assert max(_max_rise(rest, trace)) < 0.05
    agent_z = trace[-1][0]
    box_z = float(trace[-1][2][0][1])  # MuJoCo y is Unity z
    assert box_z > agent_z + 0.5 + 0.5 - 0.05  # ahead of the agent, never passed through
    assert sim.physics_warnings == {}


def test_the_agent_loses_at_least_the_momentum_it_gives_the_box(physics_sim):
    free = _run(physics_sim, obj("Cardbox1", (5.0, 0.0, 35.0), (1, 1, 1)))[2]  # box far away
    _, rest, pushed = _run(physics_sim, obj("Cardbox1", (20.0, 0.0, BOX_Z), (1, 1, 1)))
    m, big_m = lookup("Cardbox1").mass, AGENT_MASS
    # The first step that moved the box (a touch within the 2 cm contact offset comes first).
    contact = next(k for k, step in enumerate(pushed) if step[2][0][1] > rest[0][1] + 1e-3)
    # A perfectly inelastic hit leaves the agent m / (M + m) of its speed short; the box's
    # floor friction (mu m g) can only add to that while the agent pushes it.
    v_free = free[contact][1]
    assert v_free - pushed[contact][1] >= 0.9 * v_free * m / (big_m + m)
    for k in range(contact, len(pushed)):
        assert pushed[k][1] <= free[k][1] + 1e-9, k  # never faster than without the box
    assert pushed[-1][0] < free[-1][0] - 0.01


def test_a_box_hit_at_speed_is_pushed_out_and_carried_without_a_kick(physics_sim):
    """PhysX removes 80 % of the overlap in a step and keeps no push-out velocity: the 1 kg box
    leaves with the agent's speed (an inelastic hit). MuJoCo's soft contact left the agent
    0.3 m inside the box a step later and kicked the box 5 m/s faster than the agent."""
    sim = physics_sim(arena(obj("Cardbox1", (20.0, 0.0, BOX_Z), (1, 1, 1)),
                            agent=(20.0, 0.0, START_Z)))
    model, data, agent = sim._model, sim._data, sim._agent
    joint = model.body("body0").jntadr[0]
    box_y, box_vy = model.jnt_qposadr[joint] + 1, model.jnt_dofadr[joint] + 1
    seen = []
    finish = agent.after_physics_step

    def traced(contacts):
        finish(contacts)
        seen.append((agent.position[1], float(agent.velocity[1]),
                     float(data.qpos[box_y]), float(data.qvel[box_vy])))

    agent.after_physics_step = traced
    for _ in range(5):
        sim.step(0, 0)
    for _ in range(THRUST):
        sim.step(1, 0)
    hit = next(k for k, (*_, box_v) in enumerate(seen) if box_v > 0.01)
    overlaps = [agent_y + 0.5 + 0.5 - box_y for agent_y, _, box_y, _ in seen]
    assert overlaps[hit - 1] > 0.2  # the agent was deep in the box when the contact was found
    assert overlaps[hit] <= 0.2 * overlaps[hit - 1] + 1e-3
    assert seen[hit][3] == pytest.approx(seen[hit][1], abs=0.2)


def test_friction_drags_a_box_hit_at_an_angle_sideways(physics_sim):
    """The agent sliding across a box's face drags the box along (equal and opposite friction):
    a 1 kg box hit at 30 degrees off its face's normal leaves with part of the agent's sideways
    speed, never more. With friction applied to the agent alone the box left straight."""
    sim = physics_sim(arena(obj("Cardbox1", (21.6, 0.0, 12.0), (1, 1, 1)),
                            agent=(17.0, 0.0, 3.0), yaw=30.0))
    model, data, agent = sim._model, sim._data, sim._agent
    dof = model.jnt_dofadr[model.body("body0").jntadr[0]]
    seen = []
    finish = agent.after_physics_step

    def traced(contacts):
        finish(contacts)
        seen.append((float(agent.velocity[0]), float(data.qvel[dof]), float(data.qvel[dof + 1])))

    agent.after_physics_step = traced
    for _ in range(5):
        sim.step(0, 0)
    for _ in range(16):
        sim.step(1, 0)
    hit = next(k for k, (_, _, box_forward) in enumerate(seen) if box_forward > 0.01)
    agent_sideways, box_sideways, _ = seen[hit]
    assert 1.0 < box_sideways < agent_sideways


def test_a_released_box_slides_to_rest_under_coulomb_friction(physics_sim):
    sim, rest, trace = _run(physics_sim, obj("Cardbox2", (20.0, 0.0, BOX_Z), (1, 1, 1)))
    # Once the agent has stopped pushing, the box slides alone (short of the far fence):
    # its speed falls by mu g per second.
    ys = [float(boxes[0][1]) for _, _, boxes, _ in trace]
    alone = [k for k in range(THRUST + 2, len(trace) - 1)
             if not trace[k][3] and not trace[k + 1][3] and ys[k + 1] < 37.0
             and ys[k + 1] - ys[k] > 0.06]
    assert len(alone) >= 5
    speeds = [(ys[k + 1] - ys[k]) / 0.06 for k in alone]
    decel = (speeds[0] - speeds[-1]) / ((alone[-1] - alone[0]) * 0.06)
    assert decel == pytest.approx(BOX_FLOOR_MU * G, rel=0.1)
    assert max(_max_rise(rest, trace)) < 0.05
    body = sim._model.body("body0").id
    for _ in range(60):
        sim.step(0, 0)
    before = sim._data.xpos[body].copy()
    for _ in range(20):
        sim.step(0, 0)
    assert np.abs(sim._data.xpos[body] - before).max() < 1e-3  # at rest, and stays there
    assert sim.physics_warnings == {}


@pytest.mark.parametrize("agent_x", [20.0, 20.55, 21.0], ids=["seam", "centred", "edge"])
def test_boxes_side_by_side_are_pushed_along_the_floor(physics_sim, agent_x):
    row = (obj("Cardbox1", (19.45, 0.0, BOX_Z), (1, 1, 1)),
           obj("Cardbox1", (20.55, 0.0, BOX_Z), (1, 1, 1)))
    sim, rest, trace = _run(physics_sim, *row, agent_x=agent_x)
    assert max(_max_rise(rest, trace)) < 0.05
    moved = [float(centre[1]) - start[1] for centre, start in zip(trace[-1][2], rest,
                                                                    strict=True)]
    assert max(moved) > 2.0  # the agent did push something
    agent_x, agent_z = sim.state.position[0], trace[-1][0]
    for centre, start in zip(trace[-1][2], rest, strict=True):
        in_lane = abs(centre[0] - agent_x) < 0.5 + 0.5  # box half-width + agent radius
        if centre[1] - start[1] > 0.1 and in_lane:  # never passed through: ahead of it
            assert centre[1] > agent_z + 0.5, (centre, agent_x, agent_z)
    assert sim.physics_warnings == {}


def test_a_box_stacked_on_pushed_boxes_falls_rather_than_flies(physics_sim):
    pile = (obj("Cardbox1", (19.45, 0.0, BOX_Z), (1, 1, 1)),
            obj("Cardbox1", (20.55, 0.0, BOX_Z), (1, 1, 1)),
            obj("Cardbox1", (20.0, 1.05, BOX_Z), (1, 1, 1), yaw=45.0))
    sim, rest, trace = _run(physics_sim, *pile, agent_x=20.55)
    assert max(_max_rise(rest, trace)) < 0.3
    assert sim.physics_warnings == {}


BOX_BOX_MU = 0.25  # PhysX average of two LowFriction materials


def test_a_box_sliding_on_another_stops_where_coulomb_friction_says(physics_sim):
    pile = (obj("Cardbox1", (20.0, 0.0, 20.0), (1, 1, 1)),
            obj("Cardbox1", (20.0, 1.0, 20.0), (1, 1, 1)))
    sim = physics_sim(arena(*pile, agent=(5.0, 0.0, 5.0)))
    for _ in range(10):  # settle
        sim.step(0, 0)
    model, data = sim._model, sim._data
    bottom, top = model.body("body0").id, model.body("body1").id
    top_start, bottom_start = data.xpos[top].copy(), data.xpos[bottom].copy()
    v0 = 1.0
    data.qvel[model.jnt_dofadr[model.body_jntadr[top]]] = v0  # slide along world x
    for _ in range(30):
        sim.step(0, 0)
    slid = data.xpos[top] - top_start
    # Frictionless, the top box would slide off (v0 * 1.8 s); with MuJoCo's own friction
    # it was thrown up at higher speeds (the test above).
    assert slid[0] == pytest.approx(v0**2 / (2 * BOX_BOX_MU * G), rel=0.05)
    assert abs(slid[1]) < 1e-3 and abs(slid[2]) < 1e-3
    # The bottom box is dragged by 0.25 m g, less than its floor grip of 0.425 (2 m) g.
    assert np.abs(data.xpos[bottom] - bottom_start).max() < 0.005
    resting = data.xpos[top].copy()
    for _ in range(20):
        sim.step(0, 0)
    assert np.abs(data.xpos[top] - resting).max() < 1e-3  # stopped, not reversed
    assert sim.physics_warnings == {}


BOX_WALL_MU = 0.425  # PhysX average of LowFriction and the default material


def test_a_box_sliding_into_the_fence_stays_against_it(physics_sim):
    """A 2 m box sliding north along the east fence at 14 m/s and closing on it at 3 m/s:
    PhysX (bounciness 0) stops the approach, and friction takes mu times that change off the
    slide. MuJoCo's own sliding friction threw it back off at 4.5 m/s, faster than it came,
    and took 3.2 m/s off the slide."""
    sim = physics_sim(arena(obj("Cardbox2", (38.6, 0.0, 15.0), (2, 2, 2)),
                            agent=(5.0, 0.0, 5.0)))
    for _ in range(10):  # settle
        sim.step(0, 0)
    model, data = sim._model, sim._data
    body = model.body("body0").id
    dof = model.jnt_dofadr[model.body_jntadr[body]]
    v_east, v_north = 3.0, 14.0
    data.qvel[dof : dof + 2] = (v_east, v_north)  # MuJoCo x, y = Unity x (east), z (north)
    steps = 10
    for _ in range(steps):
        sim.step(0, 0)
        assert float(data.qvel[dof]) > -1.0  # never thrown back off the fence
    east_face = float(data.xpos[body][0]) + 1.0
    assert east_face > 39.5  # still at the fence (40), not metres off it
    assert abs(float(data.xpos[body][2]) - 1.0) < 0.02  # and on the floor
    # The floor took mu g per second all along; the fence mu times the approach it stopped
    # (2.9 m/s: the floor slowed the approach a little first).
    physics_steps = 3 * steps
    expected = v_north - BOX_WALL_MU * 2.9 - physics_steps * BOX_FLOOR_MU * G * 0.02
    assert float(data.qvel[dof + 1]) == pytest.approx(expected, abs=0.4)
    assert sim.physics_warnings == {}
