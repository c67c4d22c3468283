"""Built-in agents under action control: the heuristic acts per step; random, replay, human play."""

from __future__ import annotations

import io
from dataclasses import replace

import numpy as np

from llm_aai.agents.base import TurnInput
from llm_aai.agents.heuristic import HeuristicAgent
from llm_aai.agents.human import HumanAgent
from llm_aai.env import AnimalAIEnv
from llm_aai.logs import RunStore, read_turns
from llm_aai.prompts.modes import load_prompt_for_mode
from llm_aai.protocol import EpisodeProtocol
from llm_aai.protocol.action_control import MAX_REPEAT, ActionControl
from llm_aai.protocol.modes import ModeSettings
from llm_aai.replay import load_episode, resimulate
from llm_aai.runner import RunConfig, start_run
from llm_aai.runner.episode import EpisodeRunner, EpisodeSpec

ACTION = ModeSettings(control="action")
GUARDED = EpisodeProtocol(max_scripts=None, max_replies=60)


def frame_run(tmp_path, arena, model, **changes):
    arenas = tmp_path / f"testbed-{model}"
    arenas.mkdir(exist_ok=True)
    (arenas / "01-04-03.yaml").write_text(arena.read_text())
    config = replace(RunConfig(model=model, tasks="01-04-03", arenas_dir=arenas, resolution=64,
                               modes=ACTION, protocol=GUARDED), **changes)
    outcome = start_run(config, out=tmp_path / "runs", run_id=model, show_progress=False)
    return outcome.run_dir / "episodes" / "01-04-03_t1"


def test_the_heuristic_acts_per_frame_and_reaches_a_goal_ahead(tmp_path, mode_arena):
    episode = frame_run(tmp_path, mode_arena(goal=(20, 16)), "heuristic")
    turns = [turn for turn in read_turns(episode) if turn.reply is not None]
    read = ActionControl()
    for turn in turns:  # every reply is one action of the frame grammar, within the bound
        decision = read.decide(turn.reply)
        assert decision.error is None and 1 <= turn.steps <= MAX_REPEAT, turn.reply
    assert turns[-1].events and turns[-1].events[-1]["kind"] == "GoodGoal"
    report = resimulate(load_episode(episode))
    assert report.ok, report.render()


def test_the_heuristic_keeps_a_full_search_turn_across_frames():
    agent = HeuristicAgent(control="action")
    agent.start_episode("", seed=1)
    grey = np.full((64, 64, 3), 120, dtype=np.uint8)  # grey: nothing to see
    replies = [agent.act(TurnInput(images=[grey], text="")).text for _ in range(6)]
    turns = [ActionControl().decide(reply).actions for reply in replies]
    # a search turn of 60-90 degrees is 10-15 steps of one direction, sent 4 at a time
    assert all(set(actions) == set(turns[0][:1]) for actions in turns[:2])
    assert sum(len(actions) for actions in turns[:3]) >= 10


def test_random_and_replay_play_frame_mode_and_replay_reproduces(tmp_path, mode_arena):
    arena = mode_arena(t=60, goal=(30, 30))
    played = frame_run(tmp_path, arena, "random")
    original = read_turns(played)
    assert all(ActionControl().decide(t.reply).error is None for t in original if t.reply)
    again = frame_run(tmp_path, arena, "replay", replay_from=played)
    assert [t.actions for t in read_turns(again)] == [t.actions for t in original]


def test_a_human_types_actions(tmp_path, mode_arena):
    env = AnimalAIEnv(resolution=64)
    try:
        prompt = load_prompt_for_mode("react", ACTION)
        human = HumanAgent(io.StringIO("forward x2\nleft\n"), io.StringIO())
        protocol = replace(GUARDED, max_replies=2, run_out_clock=False)
        runner = EpisodeRunner(env, human, prompt, protocol, modes=ACTION)
        store = RunStore(tmp_path / "run")
        writer = store.start_episode("h_t1")
        result = runner.run(EpisodeSpec("h_t1", "h", 1, 1, 0, mode_arena(), 0.0), writer)
        writer.finish(result)
    finally:
        env.close()
    turns = read_turns(store.episodes_dir / "h_t1")
    assert [t.actions for t in turns[1:3]] == [((1, 0), (1, 0)), ((0, 2),)]
