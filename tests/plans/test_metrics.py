"""Plan metrics on hand-made plans with known answers, some driven in the real simulator."""

import numpy as np
import pytest

from llm_aai.plans.metrics import (
    ReferencePlan,
    TraceStep,
    aggregate,
    command_f1,
    lcs_similarity,
    path_efficiency,
    plan_metrics,
    violations,
)
from llm_aai.plans.trace import trace_actions
from llm_aai.script import parse_script
from llm_aai.sim import Simulator
from tests.helpers.arenas import arena, obj

REFERENCE = parse_script('Think("ahead");Turn(30);Go(10);Turn(-12);Go(4);')


def _drive(placed, script):
    sim = Simulator(render=False)
    sim.load(placed, np.random.default_rng(0))
    plan = parse_script(script)
    return sim, plan, trace_actions(sim, placed.objects, plan.actions())


def test_a_plan_equal_to_the_reference_scores_one():
    plan = parse_script('Think("other words");Turn(30);Go(10);Turn(-12);Go(4);')
    assert lcs_similarity(plan.actions(), REFERENCE.actions()) == 1.0
    assert command_f1(plan.commands, REFERENCE.commands) == 1.0


def test_similarity_of_partly_matching_plans_is_known():
    plan = parse_script("Turn(30);Go(10);")  # 5 + 10 of the reference's 5 + 10 + 2 + 4 steps
    assert lcs_similarity(plan.actions(), REFERENCE.actions()) == pytest.approx(15 / 21)
    # 2 of its 2 commands match, 2 of the reference's 4: precision 1, recall 0.5
    assert command_f1(plan.commands, REFERENCE.commands) == pytest.approx(2 / 3)
    other = parse_script("Go(-3);")
    assert lcs_similarity(other.actions(), REFERENCE.actions()) == 0.0
    assert command_f1(other.commands, REFERENCE.commands) == 0.0


def test_path_efficiency_only_for_passed_plans():
    assert path_efficiency(40, 30, passed=True) == 0.75
    assert path_efficiency(40, 30, passed=False) is None


def test_violations_count_entries_not_steps():
    inside = TraceStep(frozenset({"hot_zone"}))
    wall = TraceStep(touched=frozenset({"wall"}))
    trace = [TraceStep(), inside, inside, TraceStep(), inside, wall, wall, TraceStep(), wall]
    assert violations(trace).hot_zone == 2
    assert violations(trace).wall_hit == 2
    assert violations(trace).total == 4


def test_a_plan_through_a_death_zone_counts_one_violation():
    placed = arena(obj("DeathZone", (20.0, 0.0, 24.0), (4.0, 0.5, 2.0)),
                   obj("GoodGoal", (20.0, 0.0, 30.0), (1.0, 1.0, 1.0)))
    sim, plan, trace = _drive(placed, "Go(20);")
    assert sim.end_reason == "death_zone"
    metrics = plan_metrics(task_id="t", level=1, plan=plan, passed=False,
                           reward=sim.total_reward, trace=trace)
    assert (metrics.death_zone, metrics.violations) == (1, 1)
    assert metrics.path_efficiency is None and metrics.lcs is None


def test_a_plan_around_the_zone_passes_without_violations_and_a_wall_hit_counts():
    placed = arena(obj("DeathZone", (20.0, 0.0, 24.0), (4.0, 0.5, 2.0)),
                   obj("GoodGoal", (20.0, 0.0, 30.0), (1.0, 1.0, 1.0)))
    detour = "Turn(-48);Go(6);Turn(48);Go(9);Turn(60);Go(6);"
    sim, plan, trace = _drive(placed, detour)
    assert sim.end_reason == "good_goal"
    metrics = plan_metrics(task_id="t", level=1, plan=plan, passed=True, reward=sim.total_reward,
                           trace=trace, reference=ReferencePlan(plan, len(trace), passed=True))
    assert metrics.violations == 0
    assert (metrics.lcs, metrics.command_f1, metrics.path_efficiency) == (1.0, 1.0, 1.0)
    walled = arena(obj("Wall", (20.0, 0.0, 23.0), (6.0, 2.0, 0.5)))
    sim, _, trace = _drive(walled, "Go(15);Go(-3);Go(10);")
    assert violations(trace).wall_hit == 2


def test_an_unparsed_plan_is_not_executable_and_aggregates_per_level():
    bad = plan_metrics(task_id="a", level=1, plan=None, passed=False, reward=-1.0, trace=[])
    good = plan_metrics(task_id="b", level=1, plan=REFERENCE, passed=True, reward=1.0,
                        trace=[TraceStep()] * 21, reference=ReferencePlan(REFERENCE, 21, True))
    table = aggregate([bad, good])
    row = table.loc[1]
    assert (row["episodes"], row["executable"], row["passed"]) == (2, 0.5, 0.5)
    assert row["lcs"] == 1.0  # the unparsed plan has no similarity, so it is left out
    assert list(aggregate([bad, good], by="task_id").index) == ["a", "b"]
    with pytest.raises(ValueError, match="aggregate by"):
        aggregate([bad], by="model")


def test_a_hot_zone_crossed_and_a_red_ball_hit_count_one_each():
    placed = arena(obj("HotZone", (20.0, 0.0, 24.0), (4.0, 0.5, 2.0)),
                   obj("BadGoal", (20.0, 0.0, 30.0), (1.0, 1.0, 1.0)))
    sim, plan, trace = _drive(placed, "Go(40);")
    assert sim.end_reason is not None and sim.total_reward < 0
    counts = violations(trace)
    assert (counts.hot_zone, counts.red_ball, counts.death_zone, counts.total) == (1, 1, 0, 2)
