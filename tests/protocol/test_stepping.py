"""The protocol's stepping primitives and the paper's numbers, driven through a tiny fake env
(``CounterEnv``, see ``counter_env.py``)."""

from __future__ import annotations

import pytest

from llm_aai.protocol import (
    PAPER_PROTOCOL,
    EpisodeProtocol,
    execute_actions,
    execute_script,
    run_initial_observations,
)
from llm_aai.script import parse_script

from .counter_env import CounterEnv


def test_script_actions_reach_the_env_in_order():
    env = CounterEnv()
    obs, _ = env.reset()
    script = parse_script('Think("go");Go(2);Turn(-12);Go(-1);Turn(5);')
    outcome = execute_script(env, script, observation=obs)
    assert env.actions == [(1, 0), (1, 0), (0, 2), (0, 2), (2, 0)]
    assert outcome.steps == 5
    assert outcome.reward == pytest.approx(-0.003)
    assert outcome.health == pytest.approx(100 - 5 * 0.06, abs=1e-4)
    assert outcome.thoughts == ("go",)
    assert [i["step"] for i in outcome.infos] == [1, 2, 3, 4, 5]
    assert outcome.observation["image"][0, 0, 0] == 5
    assert not outcome.done


def test_a_script_without_steps_returns_the_observation_it_was_given():
    env = CounterEnv()
    obs, _ = env.reset()
    outcome = execute_script(env, parse_script('Think("hm");Turn(5);'), observation=obs)
    assert env.actions == []
    assert outcome.observation is obs and outcome.steps == 0 and outcome.reward == 0.0
    assert outcome.health == pytest.approx(100.0)


@pytest.mark.parametrize("truncate", [False, True])
def test_execution_stops_when_the_episode_ends(truncate):
    env = CounterEnv(end_after=4, truncate=truncate)
    obs, _ = env.reset()
    outcome = execute_script(env, parse_script("Go(10);"), observation=obs)
    assert len(env.actions) == 4 and outcome.steps == 4
    assert (outcome.terminated, outcome.truncated) == (not truncate, truncate)
    assert outcome.done


def test_initial_observations_follow_the_paper():
    env = CounterEnv()
    obs, _ = env.reset()
    start = run_initial_observations(env, obs)
    # 1 step after reset, then 3 observations each followed by 16 no-ops.
    assert env.actions == [(0, 0)] * (1 + 3 * 16)
    assert [o["image"][0, 0, 0] for o in start.observations] == [1, 17, 33]
    assert start.first_observation_health == pytest.approx(99.94, abs=1e-4)
    assert start.outcome.steps == 49
    assert start.outcome.health == pytest.approx(100 - 49 * 0.06, abs=1e-3)
    assert start.outcome.reward == pytest.approx(-49 * 0.0006)


def test_initial_observations_stop_when_the_episode_ends():
    env = CounterEnv(end_after=20)
    obs, _ = env.reset()
    start = run_initial_observations(env, obs)
    assert len(env.actions) == 20
    assert len(start.observations) == 2
    assert start.outcome.terminated


def test_protocol_numbers_are_data():
    assert PAPER_PROTOCOL == EpisodeProtocol(
        steps_after_reset=1,
        initial_observations=3,
        noops_after_initial_observation=16,
        max_scripts=30,
        noops_after_invalid_script=1,
        run_out_clock=True,
    )
    env = CounterEnv()
    obs, _ = env.reset()
    start = run_initial_observations(env, obs, EpisodeProtocol(0, 2, 3))
    assert start.observations[0] is obs and len(env.actions) == 6


def test_invalid_reply_costs_the_protocols_noops():
    env = CounterEnv()
    obs, _ = env.reset()
    outcome = execute_actions(
        env, [(0, 0)] * PAPER_PROTOCOL.noops_after_invalid_script, observation=obs
    )
    assert env.actions == [(0, 0)] and outcome.steps == 1


def test_an_undrawn_observation_needs_an_env_that_can_draw_it():
    env = CounterEnv()
    env.reset()
    with pytest.raises(TypeError, match="observe"):
        execute_actions(env, [], observation=None)
