"""The oracle solves small hand-made arenas under the script protocol, deterministically."""

from __future__ import annotations

import dataclasses

import pytest

from llm_aai.oracle import SearchSettings, play_oracle_episode
from llm_aai.oracle.search import to_script
from llm_aai.protocol import PAPER_PROTOCOL
from llm_aai.protocol.action_control import MAX_REPEAT
from llm_aai.script import parse_script
from tests.helpers.arenas import arena, obj

BUDGET = 4000


def _play(placed, pass_mark=0.0, budget=BUDGET, per_frame=False, seed=0):
    return play_oracle_episode(placed, SearchSettings(budget=budget, per_frame=per_frame,
                                                      seed=seed, pass_mark=pass_mark))


def _scripts_valid(episode):
    assert 1 <= len(episode.texts) <= PAPER_PROTOCOL.max_scripts
    for text in episode.texts:
        script = parse_script(text)  # the runner's own parser, strict mode
        assert script.thoughts and script.thoughts[0].startswith("Oracle plan")


def test_straight_goal():
    placed = arena(obj("GoodGoal", (20.0, 0.0, 30.0), (1, 1, 1)), agent=(20.0, 0.0, 10.0),
                   yaw=0.0, t=250)
    episode = _play(placed)
    assert episode.passed and episode.end_reason == "good_goal"
    _scripts_valid(episode)
    assert episode.scripts == 1


def _goal_behind(name: str, size) -> object:
    """A green ball 20 m ahead with ``name`` (a wall, a death zone) across the way."""
    return arena(obj(name, (20.0, 0.0, 20.0), size), obj("GoodGoal", (20.0, 0.0, 30.0), (1, 1, 1)),
                 agent=(20.0, 0.0, 10.0), yaw=0.0, t=500)


def test_goal_behind_a_wall():
    episode = _play(_goal_behind("Wall", (16, 3, 1)))
    assert episode.passed and episode.end_reason == "good_goal"
    _scripts_valid(episode)


def test_detours_round_a_death_zone():
    episode = _play(_goal_behind("DeathZone", (12, 0.5, 4)))
    assert episode.passed and episode.end_reason == "good_goal"


def test_collects_the_yellow_balls_before_the_green_one():
    # pass mark 3 needs both yellow balls (1 each) and the green one (1): the green is nearest
    placed = arena(obj("GoodGoal", (20.0, 0.0, 14.0), (1, 1, 1)),
                   obj("GoodGoalMulti", (30.0, 0.0, 25.0), (1, 1, 1)),
                   obj("GoodGoalMulti", (10.0, 0.0, 25.0), (1, 1, 1)),
                   agent=(20.0, 0.0, 10.0), yaw=0.0, t=600)
    episode = _play(placed, pass_mark=2.5, budget=8000)
    assert episode.passed, episode
    assert episode.reward > 2.5


def test_same_seed_and_budget_give_the_same_scripts():
    placed = arena(obj("Wall", (20.0, 0.0, 20.0), (16, 3, 1)),
                   obj("GoodGoalMulti", (12.0, 0.0, 30.0), (1, 1, 1)),
                   obj("GoodGoal", (28.0, 0.0, 30.0), (1, 1, 1)),
                   agent=(20.0, 0.0, 10.0), yaw=0.0, t=500)
    first = _play(placed, pass_mark=1.5, budget=3000, seed=7)
    again = _play(placed, pass_mark=1.5, budget=3000, seed=7)
    assert first.texts == again.texts
    assert (first.reward, first.steps, first.searched) == (again.reward, again.steps,
                                                           again.searched)


def test_budget_zero_sends_thoughts_only_and_fails():
    placed = arena(obj("GoodGoal", (20.0, 0.0, 30.0), (1, 1, 1)), agent=(20.0, 0.0, 10.0),
                   t=100)
    episode = _play(placed, budget=0)
    assert not episode.passed
    assert episode.searched == 0
    assert all(parse_script(text).n_steps == 0 for text in episode.texts)


def test_per_frame_oracle_solves_the_wall_arena():
    episode = _play(_goal_behind("Wall", (16, 3, 1)), per_frame=True)
    assert episode.passed and episode.texts == ()


def test_per_frame_replies_stop_at_the_protocols_reply_guard():
    """The protocol owns the oracle's episode: its guard on replies holds in per-frame mode
    too, where the oracle's plan alone would walk on to the ball."""
    guarded = dataclasses.replace(PAPER_PROTOCOL, max_replies=3, run_out_clock=False)
    episode = play_oracle_episode(_goal_behind("Wall", (16, 3, 1)),
                                  SearchSettings(budget=BUDGET, per_frame=True), guarded)
    start = 1 + 3 * 16
    assert start + 3 <= episode.steps <= start + 3 * MAX_REPEAT
    assert not episode.passed and episode.end_reason == "time_not_up"


def test_to_script_round_trips_long_runs():
    actions = [(1, 0)] * 230 + [(0, 1)] * 130 + [(0, 2)] * 3 + [(2, 0)] * 5
    script = to_script(actions, 'plan (with "quotes")')
    assert [tuple(a) for a in script.actions()] == actions
    assert parse_script(str(script)) == script
    with pytest.raises(ValueError, match="cannot take"):
        to_script([(1, 1)], "x")
