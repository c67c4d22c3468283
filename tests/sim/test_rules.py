import pytest
from hypothesis import given
from hypothesis import strategies as st

from llm_aai.sim.rules import Blackouts, Rules


def test_decay_is_0_06_health_per_aai_step_at_t_1000():
    rules = Rules(1000, good_goals=1)
    for _ in range(3):
        rules.tick(in_hot_zone=False)
    assert rules.health == pytest.approx(100 - 0.06)
    assert rules.total_reward == pytest.approx(-0.0006)


def test_time_limit_is_5t_physics_steps():
    rules = Rules(10, good_goals=1)
    for _ in range(49):
        rules.tick(False)
    assert not rules.done
    rules.tick(False)
    assert rules.done and rules.end_reason in ("time_limit", "health_zero")
    assert rules.health == pytest.approx(0.0, abs=1e-9)


def test_unlimited_time_has_no_decay():
    rules = Rules(0, good_goals=1)
    for _ in range(10_000):
        rules.tick(False)
    assert rules.health == 100.0 and not rules.done


def test_hot_zone_extra_is_ten_times_decay_or_at_least_0_001():
    rules = Rules(250, good_goals=1)
    decay, hot = rules.tick(in_hot_zone=True)
    assert decay == pytest.approx(-1 / 1250) and hot == pytest.approx(-2 / 250)
    assert rules.health == pytest.approx(100 - 0.08 - 0.8)
    assert Rules(5000, 1).hot == pytest.approx(-0.001)
    assert Rules(0, 1).hot == pytest.approx(-0.001)


def test_health_is_capped_but_reward_counts_fully():
    rules = Rules(1000, good_goals=3)
    rules.tick(False)
    rules.touch_goal("GoodGoalMulti", 0.999, multi=True)
    assert rules.health == 100.0
    assert rules.total_reward == pytest.approx(0.999 - 0.0002)
    assert not rules.done


def test_multis_end_only_when_all_good_goals_are_collected():
    with_goodgoal = Rules(1000, good_goals=3)  # 2 multis + 1 GoodGoal (the recording)
    for _ in range(2):
        with_goodgoal.touch_goal("GoodGoalMulti", 1.0, multi=True)
    assert not with_goodgoal.done
    with_goodgoal.touch_goal("GoodGoal", 1.0, multi=False)
    assert with_goodgoal.end_reason == "good_goal"
    only_multis = Rules(1000, good_goals=2)
    for _ in range(2):
        only_multis.touch_goal("GoodGoalMulti", 1.0, multi=True)
    assert only_multis.end_reason == "all_multis"


def test_bad_goal_and_death_zone_end_the_episode():
    bad = Rules(1000, 1)
    bad.touch_goal("BadGoal", -2.0, multi=False)
    assert bad.end_reason == "bad_goal" and bad.total_reward == -2.0
    dz = Rules(1000, 1)
    assert dz.enter_death_zone() == -1.0
    assert dz.done and dz.end_reason == "death_zone" and dz.health == 0.0
    assert dz.tick(False) == (0.0, 0.0)  # nothing happens after the end


def test_death_zone_after_decay_leaves_health_at_zero_and_the_reward_in_full():
    """Unity's UpdateHealth keeps health within 0-100: entering a death zone with 90 health
    leaves 0, not -10, while the -1 still counts in the return."""
    for build_rules in (Rules(100, 1), Rules(100, 1, health_ends=False, steps_per_unit=3)):
        for _ in range(25):
            build_rules.tick(False)
        before = build_rules.total_reward
        assert 0.0 < build_rules.health < 100.0
        assert build_rules.enter_death_zone() == -1.0
        assert build_rules.health == 0.0
        assert build_rules.total_reward == before - 1.0
        assert build_rules.end_reason == "death_zone"


def test_big_bad_goal_drops_health_to_zero():
    rules = Rules(0, 1)
    rules.touch_goal("BadGoal", -5.0, multi=False)
    assert rules.health == 0.0 and rules.done


def test_blackout_list_toggles_at_value_times_5():
    b = Blackouts([20, 25])
    assert not b.dark(99)
    assert b.dark(100) and b.dark(124)
    assert not b.dark(125)
    assert Blackouts([0, 50]).dark(0)


def test_blackouts_must_increase():
    with pytest.raises(ValueError):
        Blackouts([20, 10])


@given(st.integers(1, 80), st.integers(0, 100_000))
def test_periodic_blackout_alternates(period, step):
    dark = Blackouts([-period]).dark(step)
    assert dark == ((step // (5 * period)) % 2 == 1)


@given(st.lists(st.sampled_from(["tick", "hot", "good", "multi", "bad"]), max_size=60))
def test_health_stays_in_range(events):
    rules = Rules(250, good_goals=2)
    for event in events:
        if event in ("tick", "hot"):
            rules.tick(event == "hot")
        elif event == "multi":
            rules.touch_goal("GoodGoalMulti", 1.5, multi=True)
        elif event == "good":
            rules.touch_goal("GoodGoal", 0.7, multi=False)
        else:
            rules.touch_goal("BadGoal", -0.6, multi=False)
        assert 0.0 <= rules.health <= 100.0


def test_a_goal_counts_as_collected_only_when_it_pays_more_than_zero():
    # Goal.cs: numberOfGoalsCollected grows for 0 < reward < 10, whatever the goal's family.
    rules = Rules(1000, good_goals=3, bad_multis=1)
    rules.touch_goal("DecoyGoalMulti", 0.0, multi=True, quota="prefab")
    rules.touch_goal("BadGoalMulti", -0.5, multi=True, quota="bad_multis")
    assert rules.goals_collected == 0 and not rules.done
    rules.touch_goal("GoodGoalMulti", 1.0, multi=True)
    assert rules.goals_collected == 1 and not rules.done  # 1 of 3 good goals


@pytest.mark.parametrize(("quota", "collected_before", "ends"), [
    ("bad_multis", 1, False), ("bad_multis", 2, True), ("prefab", 0, False),
    ("prefab", 1, True), ("good_goals", 2, True), ("good_goals", 1, False),
])
def test_each_multi_family_ends_at_its_own_quota(quota, collected_before, ends):
    # numberOfGoals: good goals spawned (3 here), BadGoalMulti spawned (2), or the prefab's 1.
    rules = Rules(1000, good_goals=3, bad_multis=2)
    for _ in range(collected_before):
        rules.touch_goal("GoodGoalMulti", 0.5, multi=True)
    reward = {"bad_multis": -0.1, "prefab": 0.0, "good_goals": 0.5}[quota]
    rules.touch_goal("Ball", reward, multi=True, quota=quota)
    assert rules.done is ends
    if ends:
        assert rules.end_reason == {"bad_multis": "bad_goal", "prefab": "decoy_goal",
                                    "good_goals": "all_multis"}[quota]


def test_a_decoy_ends_the_episode_with_its_own_reason_and_no_reward():
    rules = Rules(1000, good_goals=1)
    assert rules.touch_goal("DecoyGoal", 0.0, multi=False) == 0.0
    assert rules.end_reason == "decoy_goal" and rules.total_reward == 0.0
    assert rules.health == 100.0


def test_an_unknown_quota_is_refused_by_name():
    with pytest.raises(ValueError, match="unknown multi-goal quota 'bad' for X"):
        Rules(1000, 1).touch_goal("X", 1.0, multi=True, quota="bad")
