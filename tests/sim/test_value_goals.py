"""DecayGoal, RipenGoal and AntiDecayGoal: a value that changes (docs/animal-ai-facts.md §4).

The rule is ``DecayGoal.cs`` (Unity 4.3): wait ``delays`` physics steps, then move by the rate
each step towards the final value, never upwards (no prefab flips the direction), and pay the
value of the moment of touch; the goal is multi with ``numberOfGoals`` 1, so a touch that pays
more than 0 ends the episode. Unity ships no EditMode test for this script; the cases below
follow its code.
"""

from __future__ import annotations

import numpy as np
import pytest

from llm_aai.arena import loads_config
from llm_aai.arena.errors import ArenaError
from llm_aai.arena.placement import SIZE_FACTOR, place_arena
from llm_aai.arena.timings import GoalTimings
from llm_aai.arena.validate import validate_config
from llm_aai.sim.value_goals import ValueGoal

YELLOW, GREY = (0.913, 0.723, 0.138), (0.392, 0.392, 0.392)


def _goal(initial=3.0, final=0.0, rate=-0.01, delay=0):
    return ValueGoal(GoalTimings(initial, final, rate, delay), YELLOW, GREY)


def _steps(goal, n):
    for _ in range(n):
        goal.fixed_update()
    return goal.value


def test_the_value_waits_for_the_delay_then_falls_by_the_rate_each_step():
    goal = _goal(delay=10)
    assert _steps(goal, 10) == 3.0
    assert _steps(goal, 1) == pytest.approx(2.99)  # the step that starts it already moves
    assert _steps(goal, 9) == pytest.approx(2.90)


def test_the_value_stops_at_the_final_one():
    goal = _goal(initial=1.0, final=0.5, rate=-0.2)
    assert [round(_steps(goal, 1), 6) for _ in range(4)] == [0.8, 0.6, 0.5, 0.5]


def test_a_positive_rate_is_turned_round():
    assert _steps(_goal(rate=0.5), 2) == pytest.approx(2.0)


def test_values_are_clamped_to_the_ball_range_and_a_higher_final_value_is_ignored():
    big = _goal(initial=9.0, final=-3.0, rate=-1.0)
    assert (big.initial, big.final) == (5.0, 0.0)
    ripen = _goal(initial=0.5, final=2.5, rate=-0.1)  # RipenGoal's prefab never flips
    assert _steps(ripen, 50) == 0.5


def test_the_colour_slides_from_the_initial_to_the_final_with_white_midway():
    goal = _goal(initial=1.0, final=0.0, rate=-0.5)
    assert goal.color == YELLOW
    _steps(goal, 1)  # halfway: the average lifted by 0.05 white
    assert goal.color == pytest.approx(tuple((a + b) / 2 + 0.05 for a, b in zip(YELLOW, GREY,
                                                                              strict=True)))
    _steps(goal, 1)
    assert goal.color == pytest.approx(GREY)


def _arena(goal_yaml: str, *, agent_z: float = 20) -> str:
    return ("!ArenaConfig\narenas:\n  0: !Arena\n    t: 1000\n    items:\n"
            "    - !Item\n      name: Agent\n"
            f"      positions: [!Vector3 {{x: 20, y: 0, z: {agent_z}}}]\n      rotations: [0]\n"
            + goal_yaml)


def _sim(physics_sim, text, seed=0):
    config = loads_config(text, source="v.yaml")
    assert [p for p in validate_config(config) if p.severity == "error"] == []
    return physics_sim(place_arena(config.arena(), np.random.default_rng(seed)))


def _walk(sim, steps=40):
    for _ in range(steps):
        result = sim.step(1, 0)
        goals = [(e.kind, round(e.reward, 6)) for e in result.events if "Goal" in e.kind]
        if goals or result.done:
            return goals, result
    return [], result


DECAY = ("    - !Item\n      name: {name}\n      positions: [!Vector3 {{x: 20, y: 0, z: 24}}]\n"
         "{keys}")


@pytest.mark.parametrize(("name", "keys", "paid"), [
    # touched at physics step 21 (the walk's 7th step): 10 waiting, 11 falling by 0.01
    ("DecayGoal", "      initialValues: [3]\n      finalValues: [0.5]\n"
                  "      changeRates: [-0.01]\n      delays: [10]\n", 2.89),
    # the defaults: 2.5 -> 0.5 at -0.005 from the first step (delay 0), 21 steps
    ("DecayGoal", "", 2.395),
    # AntiDecayGoal is RipenGoal, whose defaults are the same 2.5 -> 0.5: it decays
    ("AntiDecayGoal", "", 2.395),
    # a RipenGoal told to ripen keeps its initial value
    ("RipenGoal", "      initialValues: [1]\n      finalValues: [3]\n"
                  "      changeRates: [0.05]\n", 1.0),
])
def test_conformance_a_touch_pays_the_value_of_the_moment_and_ends_it(physics_sim, name,
                                                                       keys, paid):
    sim = _sim(physics_sim, _arena(DECAY.format(name=name, keys=keys)))
    events, result = _walk(sim)
    kind = "RipenGoal" if name == "AntiDecayGoal" else name
    assert events == [(kind, pytest.approx(paid))]
    assert result.done and result.end_reason == "good_goal"


def test_conformance_a_goal_decayed_to_zero_is_removed_and_the_episode_goes_on(physics_sim):
    keys = "      initialValues: [2]\n      finalValues: [0]\n      changeRates: [-1]\n"
    sim = _sim(physics_sim, _arena(DECAY.format(name="DecayGoal", keys=keys)))
    events, result = _walk(sim)
    assert events == [("DecayGoal", 0.0)] and not result.done
    assert [o.spec.name for o in sim.layout()[1]] == []


def test_conformance_a_changing_goal_does_not_count_among_the_good_goals(physics_sim):
    # a GoodGoalMulti alone in the good list: collecting it ends the episode at once
    text = _arena(DECAY.format(name="DecayGoal", keys="").replace("z: 24", "z: 5")
                  + "    - !Item\n      name: GoodGoalMulti\n"
                    "      positions: [!Vector3 {x: 20, y: 0, z: 24}]\n"
                    "      sizes: [!Vector3 {x: 1, y: 1, z: 1}]\n")
    events, result = _walk(_sim(physics_sim, text))
    assert events == [("GoodGoalMulti", pytest.approx(0.999))]
    assert result.end_reason == "all_multis"


def test_the_diameter_is_the_initial_value_whatever_the_size_says():
    text = _arena("    - !Item\n      name: DecayGoal\n"
                  "      positions: [!Vector3 {x: 10, y: 0, z: 30},"
                  " !Vector3 {x: 30, y: 0, z: 30}]\n"
                  "      sizes: [!Vector3 {x: 1, y: 1, z: 1}]\n      initialValues: [4, 7]\n")
    placed = place_arena(loads_config(text, source="v.yaml").arena(), np.random.default_rng(0))
    sizes = [o.size[0] for o in placed.objects if o.spec.name == "DecayGoal"]
    assert sizes == pytest.approx([4 * SIZE_FACTOR, 5 * SIZE_FACTOR])


def test_the_colour_drawn_follows_the_value(physics_sim):
    keys = "      initialValues: [2]\n      finalValues: [1]\n      changeRates: [-0.1]\n"
    sim = _sim(physics_sim, _arena(DECAY.format(name="DecayGoal", keys=keys), agent_z=5))
    geom = sim._model.geom("obj0")
    assert tuple(np.ravel(geom.rgba)[:3]) == pytest.approx(YELLOW)
    for _ in range(4):  # 12 physics steps: value 1, colour grey
        sim.step(0, 0)
    assert sim.goal_value(0) == pytest.approx(1.0)
    assert tuple(np.ravel(geom.rgba)[:3]) == pytest.approx(GREY, abs=1e-6)


def test_a_snapshot_keeps_the_value_and_its_countdown(physics_sim):
    keys = "      initialValues: [3]\n      changeRates: [-0.01]\n      delays: [5]\n"
    sim = _sim(physics_sim, _arena(DECAY.format(name="DecayGoal", keys=keys), agent_z=5))
    sim.step(0, 0)  # 3 of the 5 waiting steps
    early = sim.snapshot()
    for _ in range(5):
        sim.step(0, 0)
    later = sim.goal_value(0)
    sim.restore(early)
    assert sim.goal_value(0) == 3.0
    for _ in range(5):
        sim.step(0, 0)
    assert sim.goal_value(0) == later == pytest.approx(3 - 0.01 * 13)


@pytest.mark.parametrize(("keys", "message"), [
    ("      delays: [1, 2, 3]\n", "v.yaml:13: delays: 3 entries for 1 DecayGoal(s)"),
    ("      changeRates: [a]\n", "v.yaml:13: changeRates: changeRates must be a list of numbers"),
    ("      finalValues: [.nan]\n", "v.yaml:13: finalValues: [nan] holds a number that is not"),
    ("      initialValues: [0]\n", "v.yaml:13: initialValues: 0: a DecayGoal's diameter is its"),
])
def test_bad_timings_are_errors_naming_the_line(keys, message):
    config = loads_config(_arena(DECAY.format(name="DecayGoal", keys=keys)), source="v.yaml")
    errors = [str(p) for p in validate_config(config) if p.severity == "error"]
    assert len(errors) == 1 and errors[0].startswith(message)


def test_a_hand_made_changing_goal_without_timings_is_refused(physics_sim):
    from tests.helpers.arenas import arena, obj

    with pytest.raises(ValueError, match=r"DecayGoal \(item 0, instance 0\) has no timings"):
        physics_sim(arena(obj("DecayGoal", (20, 0, 30), (1, 1, 1))))


def test_loading_refuses_a_file_with_bad_timings(tmp_path):
    from llm_aai.arena import load_config

    path = tmp_path / "bad.yaml"
    path.write_text(_arena(DECAY.format(name="RipenGoal", keys="      delays: [1, 2]\n")))
    with pytest.raises(ArenaError, match=r"bad.yaml:13: delays: 2 entries for 1 RipenGoal"):
        load_config(path)
