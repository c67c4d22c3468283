"""Simulator.snapshot()/restore(): restoring and replaying gives bit-identical states and frames.

The check is deliberately blunt: after a restore, the replayed trajectory must equal the one
the simulator took the first time, step by step, in every MuJoCo array that defines it, in the
step results and in the rendered frames. Any piece of state a snapshot forgets (today's or one
added later, e.g. a new physics correction) makes some byte differ in a busy arena like this.
"""

from __future__ import annotations

import numpy as np
import pytest

from llm_aai.sim import Simulator
from llm_aai.sim.snapshot import MUTABLE_MODEL_FIELDS
from tests.helpers.arenas import arena, obj


def _busy_arena():
    """Boxes to push, a bouncing (moving) goal, multi goals, a hot zone, a ramp, blackouts."""
    return arena(
        obj("Cardbox1", (20.0, 0.0, 26.0), (1, 1, 1)),
        obj("Cardbox2", (21.2, 0.0, 29.0), (1.5, 1.5, 1.5)),
        obj("GoodGoalMulti", (23.0, 0.0, 23.0), (1, 1, 1)),
        obj("GoodGoalMulti", (10.0, 0.0, 35.0), (1, 1, 1)),
        obj("GoodGoalBounce", (30.0, 0.0, 10.0), (1, 1, 1), yaw=70.0),
        obj("HotZone", (20.0, 0.0, 20.0), (3, 1, 3)),
        obj("Ramp", (26.0, 0.0, 20.0), (3, 1, 4), yaw=90.0),
        obj("Wall", (20.0, 0.0, 31.0), (8, 2, 0.5)),
        agent=(20.0, 0.0, 20.0), yaw=0.0, t=250, blackouts=(-4,),
    )


def _actions(n: int, seed: int) -> list[tuple[int, int]]:
    rng = np.random.default_rng(seed)
    moves = rng.choice([0, 1, 1, 1, 2], size=n)
    turns = rng.choice([0, 0, 0, 1, 2], size=n)
    return list(zip(moves.tolist(), turns.tolist(), strict=True))


# From the start: collect the multi goal ahead right, come back and push the boxes, then
# wander (random actions).
_ROUTE = [(0, 1)] * 8 + [(1, 0)] * 6 + [(0, 0)] * 10 + [(0, 2)] * 14 + [(1, 0)] * 14


def _fingerprint(sim: Simulator) -> tuple:
    data = sim._data
    arrays = (data.qpos, data.qvel, data.act, data.qacc_warmstart, data.qfrc_applied,
              data.xfrc_applied, data.xpos, data.xmat)
    return (float(data.time), *(a.tobytes() for a in arrays), sim.state, sim.dark,
            sim.total_reward, sim.health, sim.done, sim.end_reason)


def _play(sim: Simulator, actions, frames: bool) -> list:
    trace = []
    for move, turn in actions:
        if sim.done:
            break
        result = sim.step(move, turn)
        entry = [result, _fingerprint(sim)]
        if frames:
            entry.append(sim.observe().tobytes())
        trace.append(entry)
    return trace


def _model_fields(sim: Simulator) -> dict[str, bytes]:
    """Every numeric array of the compiled model, to catch a write the snapshot misses."""
    model = sim._model
    out = {}
    for name in dir(model):
        if name.startswith("_"):
            continue
        value = getattr(model, name, None)
        if isinstance(value, np.ndarray):
            out[name] = value.tobytes()
    return out


def _prepared(physics_sim, steps: int):
    sim = physics_sim(_busy_arena())
    for move, turn in _actions(steps, seed=1):
        sim.step(move, turn)
    return sim


def test_restore_replays_bit_identically_through_pushes_goals_and_blackouts(physics_sim):
    sim = physics_sim(_busy_arena())
    snapshot = sim.snapshot()
    model_then = _model_fields(sim)
    route = _ROUTE + _actions(150, seed=2)
    first = _play(sim, route, frames=False)
    # the route exercised what a snapshot must carry: a goal collected, boxes pushed
    kinds = {event.kind for result, *_ in first for event in result.events}
    assert {"GoodGoalMulti", "hot_zone"} <= kinds
    box = sim._data.xpos[sim._model.body("body0").id]
    assert abs(float(box[1]) - 26.0) > 0.5  # the box was pushed (MuJoCo y is Unity z)
    assert any(fp[-5] for _, fp in first) and not all(fp[-5] for _, fp in first)  # blackouts
    sim.restore(snapshot)
    assert _model_fields(sim) == model_then  # every model write was undone
    # Now snapshot at every step, look ahead, restore: the lookahead and the continuation
    # must both be the first run's. State that lags a step (last step's contacts or forces)
    # would differ right after some restore.
    horizon = 6
    for k, action in enumerate(route[: len(first)]):
        here = sim.snapshot()
        ahead = _play(sim, route[k : k + horizon], frames=False)
        assert ahead == first[k : k + len(ahead)], f"lookahead from step {k} differs"
        sim.restore(here)
        assert _play(sim, [action], frames=False) == first[k : k + 1], f"step {k} differs"


def test_restore_in_the_middle_of_a_contact(physics_sim):
    sim = physics_sim(arena(obj("Cardbox1", (20.0, 0.0, 23.0), (1, 1, 1)), t=0))
    for _ in range(5):
        sim.step(0, 0)
    pairs = next(c for c in sim._corrections if type(c).__name__ == "PairFriction")
    while not pairs.state.contacts and not sim._agent.state.pushes:  # push until box contact
        sim.step(1, 0)
        if sim.state.steps > 60:
            pytest.fail("the agent never reached the box")
    for _ in range(3):
        sim.step(1, 0)
    box_contact = {sim._model.geom("agent").id} & set(
        g for pair in sim._data.contact.geom.tolist() for g in pair)
    assert box_contact and set(sim._agent.touching) - {0}, "snapshot not taken in contact"
    snapshot = sim.snapshot()
    later = [(1, 0)] * 20 + [(1, 1)] * 10 + [(0, 0)] * 20
    first = _play(sim, later, frames=False)
    sim.restore(snapshot)
    assert _play(sim, later, frames=False) == first


def test_restore_gives_identical_frames_and_works_across_simulators():
    placed = _busy_arena()
    rng = np.random.default_rng(0)
    drawn = Simulator(64, render=True)
    drawn.load(placed, rng)
    for move, turn in _actions(30, seed=3):
        drawn.step(move, turn)
    snapshot = drawn.snapshot()
    later = _actions(60, seed=4)
    first = _play(drawn, later, frames=True)
    drawn.restore(snapshot)
    assert _play(drawn, later, frames=True) == first
    # restored into another (physics-only) simulator of the same world: same states
    other = Simulator(render=False)
    other.load(placed, np.random.default_rng(0))
    other.restore(snapshot)
    states = [entry[:2] for entry in first]
    assert _play(other, later, frames=False) == states
    # and back: the physics-only copy's snapshot restored into the drawing simulator
    drawn.restore(snapshot)
    mid = _play(drawn, later[:30], frames=False)
    other.restore(snapshot)
    assert _play(other, later[:30], frames=False) == mid
    drawn.restore(other.snapshot())
    assert _play(drawn, later[30:], frames=True) == first[30:]
    drawn.close()


def test_a_snapshot_outlives_many_later_snapshots_and_restores_after_the_end(physics_sim):
    sim = _prepared(physics_sim, 10)
    early = sim.snapshot()
    early_state = _fingerprint(sim)
    for move, turn in _actions(400, seed=5):
        if sim.done:
            break
        sim.snapshot()  # buffers of dropped snapshots are reused: must not touch `early`
        sim.step(move, turn)
    sim.restore(early)
    assert _fingerprint(sim) == early_state
    assert not sim.done


def test_restore_refuses_a_snapshot_of_another_world(physics_sim):
    sim = _prepared(physics_sim, 3)
    other = physics_sim(arena(obj("GoodGoal", (20.0, 0.0, 30.0), (1, 1, 1))))
    with pytest.raises(ValueError, match="different world"):
        sim.restore(other.snapshot())


def test_mutable_model_fields_exist():
    sim = Simulator(render=False)
    sim.load(_busy_arena(), np.random.default_rng(0))
    for name in MUTABLE_MODEL_FIELDS:
        assert isinstance(getattr(sim._model, name), np.ndarray)


def test_restore_brings_back_the_goals_collected_that_a_multi_quota_reads(physics_sim):
    # A DecoyGoalMulti ends the episode only after a goal was collected (its quota is 1):
    # restored to before the yellow ball was eaten, the same walk must end the same way, and
    # restored to after it, the count must be there still.
    ball = (0.999, 0.999, 0.999)
    sim = physics_sim(arena(obj("GoodGoalMulti", (20.0, 0.0, 23.0), ball),
                            obj("DecoyGoalMulti", (20.0, 0.0, 26.0), ball),
                            obj("GoodGoalMulti", (5.0, 0.0, 5.0), ball), t=1000))
    start = sim.snapshot()
    first = _play(sim, [(1, 0)] * 40, frames=False)
    assert sim.end_reason == "decoy_goal"
    sim.restore(start)
    assert sim._rules.goals_collected == 0
    assert _play(sim, [(1, 0)] * 40, frames=False) == first
    sim.restore(start)
    while sim._rules.goals_collected == 0:
        sim.step(1, 0)
    assert not sim.done
    middle = sim.snapshot()
    _play(sim, [(1, 0)] * 40, frames=False)
    sim.restore(middle)
    assert sim._rules.goals_collected == 1 and not sim.done
