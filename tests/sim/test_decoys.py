"""Conformance scenarios for the decoys and BadGoalMulti (docs/animal-ai-facts.md §3, §4).

Each scenario is an arena and the outcome Unity's rule gives (``Goal.OnCollisionEnter``: a
goal paying more than 0 counts as collected; a multi goal ends the episode once that count
reaches its ``numberOfGoals``, which ``ArenaBuilders`` sets to the good goals spawned for a
GoodGoalMulti and to the BadGoalMulti spawned for a BadGoalMulti, and never sets for a
DecoyGoalMulti, whose prefab says 1). The agent starts at (20, 20) facing +z and walks
straight ahead through the balls laid on its path.
"""

from __future__ import annotations

import numpy as np
import pytest

from llm_aai.arena.model import Arena, Item, Vector3
from llm_aai.arena.objects import OBJECTS
from llm_aai.arena.placement import SIZE_FACTOR, place_arena
from tests.helpers.arenas import arena, obj

BALL = (0.999, 0.999, 0.999)
SMALL = (0.4995, 0.4995, 0.4995)
FAR = (5.0, 0.0, 5.0)
"""Where a ball sits that the walk never reaches (it only counts)."""


def _walk(sim, steps: int = 40):
    """Walk forward until the episode ends or ``steps`` run out; the goal events seen."""
    events = []
    for _ in range(steps):
        result = sim.step(1, 0)
        events += [(e.kind, round(e.reward, 6)) for e in result.events
                   if e.kind not in ("decay", "hot_zone")]
        if result.done:
            break
    return events


SCENARIOS = {
    "a DecoyGoal pays 0 and ends the episode as a GoodGoal does": (
        [obj("DecoyGoal", (20, 0, 23), BALL), obj("GoodGoal", FAR, BALL)],
        [("DecoyGoal", 0.0)], "decoy_goal"),
    "a DecoyGoalBounce, kicked towards the agent, pays 0 and ends it": (
        [obj("DecoyGoalBounce", (20, 0, 26), BALL, yaw=180), obj("GoodGoal", FAR, BALL)],
        [("DecoyGoalBounce", 0.0)], "decoy_goal"),
    "a DecoyGoalMulti touched before any goal is collected pays 0 and is removed": (
        [obj("DecoyGoalMulti", (20, 0, 23), BALL), obj("GoodGoal", FAR, BALL)],
        [("DecoyGoalMulti", 0.0)], None),
    "a DecoyGoalMulti after one collected goal ends the episode (its quota is 1)": (
        [obj("GoodGoalMulti", (20, 0, 23), BALL), obj("DecoyGoalMulti", (20, 0, 26), BALL),
         obj("GoodGoalMulti", FAR, BALL)],
        [("GoodGoalMulti", 0.999), ("DecoyGoalMulti", 0.0)], "decoy_goal"),
    "a BadGoalMulti pays minus its size and is removed while fewer goals are collected": (
        [obj("BadGoalMulti", (20, 0, 23), SMALL), obj("GoodGoal", FAR, BALL)],
        [("BadGoalMulti", -0.4995)], None),
    "three BadGoalMulti: one collected goal is fewer than their count, it is removed": (
        [obj("GoodGoalMulti", (20, 0, 23), BALL), obj("BadGoalMulti", (20, 0, 26), SMALL),
         obj("BadGoalMulti", (35, 0, 35), SMALL), obj("BadGoalMulti", (35, 0, 5), SMALL),
         obj("GoodGoalMulti", FAR, BALL)],
        [("GoodGoalMulti", 0.999), ("BadGoalMulti", -0.4995)], None),
    "a BadGoalMulti ends it once the goals collected reach the BadGoalMulti count": (
        [obj("GoodGoalMulti", (20, 0, 23), BALL), obj("BadGoalMulti", (20, 0, 26), SMALL),
         obj("GoodGoalMulti", FAR, BALL)],
        [("GoodGoalMulti", 0.999), ("BadGoalMulti", -0.4995)], "bad_goal"),
    "a BadGoalMulti that takes the last health ends the episode on health": (
        [obj("BadGoalMulti", (20, 0, 23), BALL), obj("GoodGoal", FAR, BALL)],
        [("BadGoalMulti", -0.999)], "health_zero"),
    "decoys do not count among the good goals: one GoodGoalMulti ends it": (
        [obj("GoodGoalMulti", (20, 0, 23), BALL), obj("DecoyGoal", FAR, BALL),
         obj("DecoyGoalMulti", (5, 0, 35), BALL), obj("BadGoalMulti", (35, 0, 5), BALL)],
        [("GoodGoalMulti", 0.999)], "all_multis"),
}


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_conformance(physics_sim, name):
    objects, expected_events, expected_end = SCENARIOS[name]
    sim = physics_sim(arena(*objects, t=1000))
    assert _walk(sim) == expected_events
    assert sim.end_reason == expected_end
    assert sim.done is (expected_end is not None)


def test_a_removed_multi_is_gone_from_the_world_and_the_layout(physics_sim):
    sim = physics_sim(arena(obj("BadGoalMulti", (20, 0, 23), SMALL),
                            obj("DecoyGoalMulti", (20, 0, 26), BALL),
                            obj("GoodGoal", FAR, BALL), t=1000))
    _walk(sim, 14)
    _, objects, _ = sim.layout()
    assert [o.spec.name for o in objects] == ["GoodGoal"]


def test_a_decoy_leaves_health_to_the_decay_alone(physics_sim):
    sim = physics_sim(arena(obj("DecoyGoal", (20, 0, 23), BALL), t=1000))
    _walk(sim)
    decay_only = 100 + 100 * -sim.state.physics_steps / (5 * 1000)
    assert sim.health == pytest.approx(decay_only) and sim.total_reward < 0


@pytest.mark.parametrize("name", ["DecoyGoal", "DecoyGoalBounce", "DecoyGoalMulti",
                                  "BadGoalMulti"])
@pytest.mark.parametrize(("written", "diameter"), [(2.0, 2.0), (7.0, 5.0), (0.1, 0.5)])
def test_sizes_clamp_as_every_ball_and_the_reward_is_the_signed_diameter(physics_sim, name,
                                                                         written, diameter):
    # Unity's BallGoalTests (SetSize within limits, clipped) with the new goals' prefabs:
    # sizes 0.5-5, times 0.999; the reward is sign(prefab reward) x diameter.
    item = Item(name, positions=(Vector3(20, 0, 30),),
                sizes=(Vector3(written, written, written),))
    placed = place_arena(Arena(time_limit=100, items=(Item("Agent", positions=(
        Vector3(20, 0, 5),), rotations=(0,)), item)), np.random.default_rng(0))
    ball = next(o for o in placed.objects if o.spec.name == name)
    assert ball.size[0] == pytest.approx(diameter * SIZE_FACTOR)
    sim = physics_sim(placed)
    goal = next(g for g in sim._goals.values() if g.info.name == name)
    assert goal.info.reward == pytest.approx(OBJECTS[name].reward_sign * diameter * SIZE_FACTOR)


def test_a_random_size_is_drawn_from_the_ball_range():
    # BallGoalTests: a negative size draws the diameter from [0.5, 5].
    items = (Item("Agent", positions=(Vector3(20, 0, 5),)),
             Item("DecoyGoalMulti", positions=tuple(Vector3(4 + 8 * k, 0, 30) for k in range(4)),
                  sizes=(Vector3(-1, -1, -1),) * 4))
    sizes = {o.size[0] for o in place_arena(Arena(items=items), np.random.default_rng(3)).objects
             if o.spec.name == "DecoyGoalMulti"}
    assert len(sizes) == 4 and all(0.5 * SIZE_FACTOR <= s <= 5 * SIZE_FACTOR for s in sizes)


def test_the_new_goals_keep_their_prefab_looks():
    # Decoy.mat's base colour is a 0.698 grey; BadGoalMulti.mat is black with an orange-red
    # emission (1, 0.177, 0), drawn as its colour as GoalMulti.mat's yellow emission is.
    grey = (0.698, 0.698, 0.698)
    assert OBJECTS["DecoyGoal"].color == OBJECTS["DecoyGoalMulti"].color == grey
    assert OBJECTS["DecoyGoalBounce"].color == grey
    assert OBJECTS["BadGoalMulti"].color == (1.0, 0.177, 0.0)
    assert OBJECTS["DecoyGoal"].rotation_range == (0.0, 0.0)
    assert OBJECTS["DecoyGoalBounce"].rotation_range == (0.0, 360.0)
