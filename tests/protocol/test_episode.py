"""The episode driver: the turn loop, the reply cap, the run-out and the two seams (control,
observation policy), driven through ``CounterEnv``."""

from __future__ import annotations

import dataclasses

import pytest

from llm_aai.protocol import (
    PAPER_PROTOCOL,
    Decision,
    Episode,
    EpisodeProtocol,
    StepOutcome,
    combine,
    execute_actions,
)

from .counter_env import CounterEnv

START_STEPS = 1 + 3 * 16


def test_start_resets_with_the_seed_and_arena_and_counts_the_no_ops():
    env = CounterEnv()
    episode = Episode(env)
    start = episode.start(seed=7, arena="01-04-03")
    assert env.resets == [(7, {"arena": "01-04-03"})]
    assert len(start.observations) == 3 and len(env.actions) == START_STEPS
    assert episode.totals.steps == START_STEPS and episode.totals.replies == 0
    assert episode.totals.reward == pytest.approx(-0.0006 * START_STEPS)
    assert episode.observation is start.outcome.observation


def test_a_script_plays_its_actions_and_a_refused_reply_costs_one_no_op():
    env = CounterEnv()
    episode = Episode(env)
    episode.start(seed=0)
    played = episode.play("Go(2);Turn(12);")
    assert env.actions[START_STEPS:] == [(1, 0), (1, 0), (0, 1), (0, 1)]
    assert played.number == 1 and played.outcome.steps == 4 and played.decision.error is None
    assert played.decision.script.commands[0].steps == 2
    assert len(played.observations) == 1
    assert played.observations[0]["image"][0, 0, 0] == START_STEPS + 4
    refused = episode.play("walk to the ball")
    assert refused.decision.refused and "unknown command" in refused.decision.error
    assert refused.actions == ((0, 0),) and refused.outcome.steps == 1
    assert episode.totals.replies == 2 and episode.totals.refused == 1
    assert episode.totals.steps == START_STEPS + 5


def test_the_cap_stops_replies_and_the_run_out_plays_no_ops_to_the_end():
    env = CounterEnv(end_after=START_STEPS + 30, end_reason="time_limit")
    episode = Episode(env, dataclasses.replace(PAPER_PROTOCOL, max_scripts=2))
    episode.start(seed=0)
    episode.play("Go(3);")
    episode.play("Turn(-6);")
    assert not episode.wants_reply
    with pytest.raises(RuntimeError, match="no more replies"):
        episode.play("Go(1);")
    end = episode.run_out()
    assert end.steps == 30 - 4 and env.actions[-end.steps:] == [(0, 0)] * end.steps
    assert episode.totals.over and episode.totals.end_reason == "time_limit"
    assert episode.totals.steps == len(env.actions) == START_STEPS + 30
    assert episode.totals.reward == pytest.approx(-0.0006 * (START_STEPS + 30))


def test_the_run_out_is_bounded_and_optional():
    env = CounterEnv()  # never ends by itself, as an arena with t=0
    bounded = Episode(env, EpisodeProtocol(max_scripts=1, run_out_max_steps=25))
    bounded.start(seed=0)
    bounded.play("Go(1);")
    assert bounded.run_out().steps == 25 and not bounded.totals.over
    skipped = Episode(CounterEnv(), EpisodeProtocol(max_scripts=1, run_out_clock=False))
    skipped.start(seed=0)
    skipped.play("Go(1);")
    end = skipped.run_out()
    assert end.steps == 0 and end.observation is skipped.observation


def test_an_episode_that_ends_mid_script_takes_no_more_replies():
    env = CounterEnv(end_after=START_STEPS + 2, truncate=True)
    episode = Episode(env)
    episode.start(seed=0)
    turn = episode.play("Go(10);")
    assert turn.outcome.steps == 2 and turn.outcome.truncated
    assert not episode.wants_reply and episode.totals.end_reason == "truncated"
    assert episode.run_out().steps == 0


def test_no_cap_plays_every_reply():
    episode = Episode(CounterEnv(), EpisodeProtocol(max_scripts=None))
    episode.start(seed=0)
    for _ in range(PAPER_PROTOCOL.max_scripts + 5):
        episode.play('Think("on");')
    assert episode.wants_reply and episode.totals.replies == 35


class EveryTwoSteps:
    """An observation policy as a mode would add one: a frame after every 2 actions."""

    def runs(self, actions):
        return [actions[i:i + 2] for i in range(0, len(actions), 2)] or [actions]


def test_an_observation_policy_chooses_the_frames_without_changing_the_steps():
    paper, cut = CounterEnv(), CounterEnv()
    episodes = [Episode(paper), Episode(cut, observations=EveryTwoSteps())]
    turns = []
    for episode in episodes:
        episode.start(seed=0)
        turns.append(episode.play("Go(3);Turn(12);"))
    assert paper.actions == cut.actions
    assert [o["image"][0, 0, 0] for o in turns[1].observations] == [
        START_STEPS + 2, START_STEPS + 4, START_STEPS + 5]
    assert turns[1].outcome.steps == turns[0].outcome.steps == 5
    assert turns[1].outcome.reward == pytest.approx(turns[0].outcome.reward)
    assert episodes[1].totals.steps == episodes[0].totals.steps


class OneLetter:
    """A control as a mode would add one: W is three steps forward, anything else refused."""

    def decide(self, reply):
        if reply.strip() == "W":
            return Decision(actions=((1, 0),) * 3)
        return Decision(error=f"{reply!r} is not an action letter")


def test_a_control_decides_what_a_reply_does():
    env = CounterEnv()
    episode = Episode(env, control=OneLetter())
    episode.start(seed=0)
    assert episode.play("W").actions == ((1, 0),) * 3
    refused = episode.play("Go(3);")
    assert refused.actions == ((0, 0),) and "not an action letter" in refused.decision.error
    assert env.actions[START_STEPS:] == [(1, 0)] * 3 + [(0, 0)]


def test_combine_adds_runs_in_order():
    env = CounterEnv(end_after=3)
    observation, _ = env.reset()
    first = execute_actions(env, [(1, 0)] * 2, observation=observation, thoughts=("a",))
    second = execute_actions(env, [(0, 1)] * 5, observation=first.observation)
    both = combine([first, second])
    assert both.steps == 3 and both.terminated and both.observation is second.observation
    assert both.reward == pytest.approx(-0.0018) and both.thoughts == ("a",)
    assert [i["step"] for i in both.infos] == [1, 2, 3]
    assert isinstance(both, StepOutcome)
