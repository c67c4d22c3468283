"""The physics corrections' hook: every correction runs around every physics step."""

import copy

from llm_aai.sim.agent_physics import AgentPhysics
from llm_aai.sim.angular_drag import AngularDrag
from llm_aai.sim.angular_limit import AngularSpeedLimit
from llm_aai.sim.corrections import ContactRead
from llm_aai.sim.floor_friction import FloorFriction
from llm_aai.sim.pair_friction import PairFriction
from tests.helpers.arenas import arena, obj


class _Probe:
    """A correction that records the calls it gets and the contacts it is shown."""

    def __init__(self):
        self.state = []

    def start(self, contacts):
        self.state.append(("start", contacts.count))

    def before_physics_step(self):
        self.state.append(("before",))

    def after_physics_step(self, contacts):
        self.state.append(("after", contacts.count, contacts.geoms))


def test_a_correction_in_the_list_runs_before_and_after_every_physics_step(physics_sim):
    sim = physics_sim(arena(obj("Cardbox1", (20.0, 0.0, 22.0), (1, 1, 1))))
    probe = _Probe()
    sim._corrections.append(probe)
    sim.step(1, 0)
    sim.step(0, 0)
    kinds = [call[0] for call in probe.state]
    assert kinds == ["before", "after"] * 6  # 2 AAI steps of 3 physics steps
    floor = sim._model.geom("floor").id
    afters = probe.state[1::2]
    assert all(call[1] == len(call[2]) for call in afters)
    assert any(floor in pair for call in afters for pair in call[2])  # the box on the floor


def test_the_built_in_corrections_share_one_contact_read(physics_sim):
    sim = physics_sim(arena(obj("Cardbox1", (20.0, 0.0, 22.0), (1, 1, 1))))
    kinds = [type(c) for c in sim._corrections]
    assert kinds == [AgentPhysics, FloorFriction, PairFriction, AngularDrag, AngularSpeedLimit]
    seen = []
    for correction in sim._corrections:
        finish = correction.after_physics_step

        def traced(contacts, finish=finish):
            seen.append(contacts)
            finish(contacts)

        correction.after_physics_step = traced
    sim.step(1, 0)
    assert len(seen) == 15 and all(read is seen[0] for read in seen)
    assert isinstance(seen[0], ContactRead)


def test_restoring_a_copied_state_replays_the_same_steps(physics_sim):
    """Each correction's state between steps is its ``state`` plus MuJoCo's arrays: restoring
    a deep copy of both gives the same trajectory again (what a snapshot must carry). A state
    left out (the grounded flag, the floor forces) would change it by centimetres; what is left
    is MuJoCo's own (bit-identical restores are the snapshot's business)."""
    placed = arena(obj("Cardbox1", (20.0, 0.0, 22.0), (1, 1, 1)))
    sim = physics_sim(placed)
    for _ in range(6):
        sim.step(1, 0)
    data, model = sim._data, sim._model
    saved = (data.qpos.copy(), data.qvel.copy(), data.qfrc_applied.copy(),
             data.xfrc_applied.copy(), data.qacc_warmstart.copy(), model.dof_frictionloss.copy(),
             [copy.deepcopy(c.state) for c in sim._corrections])
    first = []
    for _ in range(8):
        sim.step(1, 1)
        first.append(data.qpos.copy())
    (data.qpos[:], data.qvel[:], data.qfrc_applied[:], data.xfrc_applied[:],
     data.qacc_warmstart[:]) = saved[:5]
    model.dof_frictionloss[:] = saved[5]
    for correction, state in zip(sim._corrections, saved[6], strict=True):
        correction.state = copy.deepcopy(state)
    import mujoco

    mujoco.mj_forward(model, data)
    again = []
    for _ in range(8):
        sim.step(1, 1)
        again.append(data.qpos.copy())
    assert max(abs(a - b).max() for a, b in zip(first, again, strict=True)) < 1e-6
