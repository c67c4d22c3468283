"""The paper's episode protocol, played for real in the embedded simulator."""

from __future__ import annotations

import numpy as np
import pytest

from llm_aai.agents.base import AgentReply
from llm_aai.agents.replay import ReplayAgent
from llm_aai.env import AnimalAIEnv
from llm_aai.llm.errors import LLMUnavailable
from llm_aai.logs import RunStore, read_turns
from llm_aai.prompts import load_prompt
from llm_aai.protocol import EpisodeProtocol
from llm_aai.runner.episode import EpisodeRunner, EpisodeSpec

PROMPT = load_prompt("react")


@pytest.fixture(scope="module")
def env():
    environment = AnimalAIEnv(resolution=64)
    yield environment
    environment.close()


def play(env, tmp_path, arena, scripts, *, pass_mark=0.0, protocol=EpisodeProtocol(), agent=None):
    store = RunStore(tmp_path / "run")
    spec = EpisodeSpec("ep_t1", "ep", 1, 1, seed=3, arena_path=arena, pass_mark=pass_mark)
    runner = EpisodeRunner(env, agent or ReplayAgent(scripts), PROMPT, protocol)
    writer = store.start_episode(spec.episode_id)
    result = runner.run(spec, writer)
    writer.finish(result)
    records = read_turns(store.episodes_dir / spec.episode_id)
    assert [r.turn for r in records] == list(range(len(records)))  # turn 0 first, no gaps
    return result, records[1:]  # the scripted turns (and the closing one)


def test_step_counts_follow_the_paper(env, tmp_path, make_arena):
    # t=1000: 0.06 health per step. 1 step after reset + 3 x 16 no-ops before the first script.
    result, turns = play(env, tmp_path, make_arena(t=1000), ["Turn(90);", "Turn(-30);"],
                         protocol=EpisodeProtocol(max_scripts=2, run_out_clock=False))
    assert turns[0].sent_text == "Your remaining health is 99.9."
    assert len(turns[0].sent_images) == 3
    assert [t.steps for t in turns] == [15, 5, 0]
    assert turns[0].health == pytest.approx(100 - 0.06 * (49 + 15), abs=1e-3)
    assert result.steps == 49 + 15 + 5
    assert result.end_reason == "script_cap"
    assert result.scripts_used == 2
    [start] = [t for t in read_turns(tmp_path / "run" / "episodes" / "ep_t1") if t.turn == 0]
    assert start.steps == 49 and start.actions == ((0, 0),) * 49 and start.reply is None
    assert start.sent_images == () and start.health == pytest.approx(100 - 0.06 * 49, abs=1e-3)
    assert start.reward + sum(t.reward for t in turns) == pytest.approx(result.reward, abs=1e-6)


def test_turn_0_logs_the_health_told_beside_the_health_after_its_steps(env, tmp_path,
                                                                     make_arena):
    # t=100: 0.6 health per step. The first message states the health at the first initial
    # observation (after 1 step), as the paper's harness did; 48 more no-ops follow it.
    _, turns = play(env, tmp_path, make_arena(t=100), ["Turn(6);"],
                    protocol=EpisodeProtocol(max_scripts=1, run_out_clock=False))
    [start] = [t for t in read_turns(tmp_path / "run" / "episodes" / "ep_t1") if t.turn == 0]
    assert start.health_told == pytest.approx(100 - 0.6, abs=1e-3)
    assert start.health == pytest.approx(100 - 0.6 * 49, abs=1e-3)
    assert turns[0].sent_text == f"Your remaining health is {start.health_told:.1f}."
    assert all(t.health_told is None for t in turns)  # later messages state the logged health


def test_reaching_the_goal_ends_the_episode_and_passes(env, tmp_path, make_arena):
    result, turns = play(env, tmp_path, make_arena(), ["Go(10);", "Go(10);"])
    assert result.end_reason == "good_goal" and result.passed
    assert result.scripts_used == 1
    assert [e["kind"] for e in turns[0].events] == ["GoodGoal"]
    assert turns[-1].reply is None and turns[-1].terminated


def test_invalid_reply_gets_feedback_and_one_noop(env, tmp_path, make_arena):
    result, turns = play(env, tmp_path, make_arena(), ["Go(3) please", "Go(10);"])
    assert result.invalid_replies == 1
    first, second = turns[0], turns[1]
    assert first.commands is None and "Go(3) please" in first.reply
    assert first.parse_error and first.steps == 1
    assert second.sent_preamble.startswith("Your last reply could not be carried out")
    assert first.parse_error in second.sent_preamble
    assert second.commands == ({"op": "Go", "arg": 10},)


def test_script_cap_then_clock_runs_out(env, tmp_path, make_arena):
    # Turning on the spot never reaches the ball: after the cap, no-ops drain the health.
    result, turns = play(env, tmp_path, make_arena(t=250), ["Turn(180);"] * 3,
                         protocol=EpisodeProtocol(max_scripts=3))
    assert result.scripts_used == 3
    assert result.final_health == 0.0
    assert result.end_reason in {"time_limit", "health_zero"}
    assert turns[-1].steps > 0 and turns[-1].terminated
    assert result.reward == pytest.approx(-1.0, abs=0.01)


@pytest.mark.parametrize(("pass_mark", "passed"), [(0.0, False), (-1.5, True), (-0.5, False)])
def test_pass_mark_compares_total_reward(env, tmp_path, make_arena, pass_mark, passed):
    # Never moving: total reward about -1 (time out), so only a pass mark below -1 passes.
    result, _ = play(env, tmp_path, make_arena(t=250, pass_mark=pass_mark), ["Turn(6);"],
                     pass_mark=pass_mark, protocol=EpisodeProtocol(max_scripts=1))
    assert result.reward == pytest.approx(-1.0, abs=0.01)
    assert result.passed is passed


def test_zero_pass_mark_passes_with_goal(env, tmp_path, make_arena):
    result, _ = play(env, tmp_path, make_arena(pass_mark=0.0), ["Go(10);"])
    assert result.reward > 0 and result.passed


class _Unreachable:
    name = "unreachable"

    def start_episode(self, system_prompt, seed, prelude=()):
        pass

    def act(self, turn):
        raise LLMUnavailable("fake outage after 4 attempts", attempts=4)


def test_unreachable_model_is_an_infrastructure_failure(env, tmp_path, make_arena):
    result, _ = play(env, tmp_path, make_arena(), [], agent=_Unreachable())
    assert result.end_reason == "infrastructure"
    assert not result.passed
    assert "fake outage" in result.infra_error


def test_usage_is_summed_into_the_result(env, tmp_path, make_arena):
    class Costly(ReplayAgent):
        def act(self, turn):
            reply = super().act(turn)
            return AgentReply(text=reply.text, model="m", input_tokens=100, output_tokens=7,
                              cost_usd=0.01, latency_s=0.5, retries=1)

    result, turns = play(env, tmp_path, make_arena(), [], agent=Costly(["Turn(6);", "Go(10);"]))
    assert (result.input_tokens, result.output_tokens) == (200, 14)
    assert result.cost_usd == pytest.approx(0.02)
    assert turns[0].usage.retries == 1


class _RecordingGate:
    """A setup gate that notes how far the episode was when it was entered and left."""

    def __init__(self, steps, agent):
        self.steps, self.agent, self.seen = steps, agent, []

    def __enter__(self):
        self.seen.append(("enter", len(self.steps), len(self.agent.calls)))

    def __exit__(self, *exc):
        self.seen.append(("exit", len(self.steps), len(self.agent.calls)))


class _CountingReplay(ReplayAgent):
    def __init__(self, scripts):
        super().__init__(scripts)
        self.calls = []

    def act(self, turn):
        self.calls.append(turn)
        return super().act(turn)


def test_setup_gate_spans_reset_and_the_initial_observations_only(
    env, tmp_path, make_arena, monkeypatch
):
    steps: list = []
    real_play = env.play

    def counting_play(actions, **options):
        steps.extend(actions)
        return real_play(actions, **options)

    monkeypatch.setattr(env, "play", counting_play)
    agent = _CountingReplay(["Go(1);"])
    gate = _RecordingGate(steps, agent)
    store = RunStore(tmp_path / "run")
    spec = EpisodeSpec("ep_t1", "ep", 1, 1, seed=3, arena_path=make_arena(), pass_mark=0.0)
    runner = EpisodeRunner(env, agent, PROMPT, EpisodeProtocol(max_scripts=1, run_out_clock=False),
                           setup_gate=gate)
    runner.run(spec, store.start_episode(spec.episode_id))
    assert gate.seen == [
        ("enter", 0, 0),
        ("exit", 1 + 3 * 16, 0),  # reset and every initial observation inside; no model call
    ]
    assert len(agent.calls) == 1 and len(steps) == 1 + 3 * 16 + 1


def test_a_first_script_without_steps_shows_the_frame_after_the_initial_noops(
    env, tmp_path, make_arena
):
    from llm_aai.frames import FrameFormat, read_frame
    from llm_aai.protocol import run_initial_observations

    arena = make_arena()
    store = RunStore(tmp_path / "run", FrameFormat("png"))
    spec = EpisodeSpec("ep_t1", "ep", 1, 1, seed=3, arena_path=arena, pass_mark=0.0)
    runner = EpisodeRunner(env, ReplayAgent(["Turn(5);", "Go(1);"]), PROMPT,
                           EpisodeProtocol(max_scripts=2, run_out_clock=False))
    runner.run(spec, store.start_episode(spec.episode_id))
    turns = read_turns(store.episodes_dir / spec.episode_id)[1:]  # after turn 0
    assert turns[0].steps == 0 and len(turns[1].sent_images) == 1
    shown = read_frame(store.episodes_dir / spec.episode_id / turns[1].sent_images[0])
    observation, _ = env.reset(seed=3, options={"arena": str(arena)})
    expected = run_initial_observations(env, observation).outcome.observation["image"]
    assert np.array_equal(shown, expected)
