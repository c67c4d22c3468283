"""``--control action`` end to end: one named action per reply, an observation after each."""

from __future__ import annotations

from dataclasses import replace

import pytest

from llm_aai.logs.schema import move_text
from llm_aai.prompts import load_prompt
from llm_aai.protocol import EpisodeProtocol
from llm_aai.protocol.action_control import ACTION_NAMES, MAX_REPEAT, ActionControl
from llm_aai.protocol.modes import ModeSettings
from tests.helpers.modes import images_of, text_of

ACTION = ModeSettings(control="action")


def guarded(replies: int, **changes) -> EpisodeProtocol:
    return replace(EpisodeProtocol(max_scripts=None, max_replies=replies), **changes)


@pytest.mark.parametrize(("reply", "actions"), [
    ("forward", [(1, 0)]),
    ("back-left x3", [(2, 2)] * 3),
    ('Think("The ball is ahead.");forward-right x4;', [(1, 1)] * 4),
    ("  stay x2 \n", [(0, 0)] * 2),
])
def test_a_reply_names_one_action_repeated(reply, actions):
    decision = ActionControl().decide(reply)
    assert decision.error is None and list(decision.actions) == actions
    assert decision.commands[-1]["op"] == "Act"


@pytest.mark.parametrize(("reply", "says"), [
    ("jump", "'jump' is not an action"),
    (f"forward x{MAX_REPEAT + 1}", f"repeats 1 to {MAX_REPEAT} times"),
    ("Go(3);", "not one action"),
    ("forward; left", "not one action"),
    ("", "empty"),
    ("Forward", "'Forward' is not an action"),
])
def test_a_reply_that_is_not_one_action_is_refused_with_the_reason(reply, says):
    decision = ActionControl().decide(reply)
    assert decision.refused and says in decision.error and decision.actions == ()


def test_lenient_reading_takes_a_fenced_capitalised_action_and_notes_it():
    decision = ActionControl("lenient").decide("```\nForward x2\n```")
    assert list(decision.actions) == [(1, 0)] * 2
    assert [note.split(":")[0] for note in decision.notes] == ["code_fence", "lowercase_action"]


def test_the_frame_prompt_defines_every_action_and_the_bound():
    text = load_prompt("react-frame").text
    for name in ACTION_NAMES:
        assert f"- {name}:" in text
    assert f"x{MAX_REPEAT}" in text and "Go(" not in text


def test_each_reply_takes_its_steps_and_an_observation_follows(run_mode, mode_arena):
    run = run_mode(mode_arena(t=1000, goal=(30, 30)),
                   ['Think("Looking right.");right x4', "forward x3", "stay"],
                   modes=ACTION, protocol=guarded(3, run_out_clock=False))
    assert [turn.steps for turn in run.turns[1:4]] == [4, 3, 1]
    assert [turn.actions for turn in run.turns[1:4]] == [((0, 1),) * 4, ((1, 0),) * 3,
                                                        ((0, 0),)]
    assert run.turns[1].commands == ({"op": "Think", "arg": "Looking right."},
                                     {"op": "Act", "arg": "right", "repeat": 4})
    assert len(run.bodies) == 3
    system = run.bodies[0]["messages"][0]
    assert system["role"] == "system" and "The nine actions" in text_of(system)
    assert len(images_of(run.last_user(0))) == 3  # the paper's three opening pictures
    for request in (1, 2):  # then one picture after every reply, the history kept
        assert len(images_of(run.last_user(request))) == 1
        assert len(run.user_messages(request)) == request + 1
    assert run.bodies[2]["messages"][-2]["content"] == "forward x3"
    assert run.result.scripts_used == 3 and run.result.end_reason == "reply_guard"
    assert run.result.steps == 49 + 8


def test_an_invalid_reply_costs_a_noop_and_is_explained_next_turn(run_mode, mode_arena):
    run = run_mode(mode_arena(t=1000, goal=(30, 30)), ["Go(5);", "left x2"],
                   modes=ACTION, protocol=guarded(2, run_out_clock=False))
    assert run.turns[1].parse_error and run.turns[1].actions == ((0, 0),)
    feedback = text_of(run.last_user(1))
    assert "could not be carried out" in feedback and "not one action" in feedback
    assert 'forward-left x2' in feedback  # the frame prompt's example, not a script
    assert run.result.invalid_replies == 1 and run.turns[2].steps == 2


def test_the_episode_ends_at_the_arena_time_limit(run_mode, mode_arena):
    # t=60 is 300 physics steps, 100 agent steps: 49 before the first reply, then 4 a reply,
    # so the 13th reply reaches the limit, long before the guard
    run = run_mode(mode_arena(t=60, goal=(30, 30)), [], default="stay x4",
                   modes=ACTION, protocol=guarded(100))
    assert len(run.bodies) == 13 and run.result.scripts_used == 13
    assert run.result.steps == 100 and run.result.end_reason == "time_limit"
    assert run.turns[13].steps == 3  # the last reply was cut by the limit


def test_the_reply_guard_ends_it_and_the_clock_runs_out(run_mode, mode_arena):
    run = run_mode(mode_arena(t=60, goal=(30, 30)), [], default="stay",
                   modes=ACTION, protocol=guarded(5))
    assert len(run.bodies) == 5 and run.result.scripts_used == 5
    assert run.result.steps == 100  # the paper's run-out after the last reply
    assert run.result.end_reason == "time_limit"
    assert run.turns[-1].reply is None and run.turns[-1].steps == 100 - 49 - 5


def test_reaching_the_goal_by_frames_passes(run_mode, mode_arena):
    run = run_mode(mode_arena(t=1000, goal=(20, 16)), [], default="forward x4",
                   modes=ACTION, protocol=guarded(30))
    assert run.result.passed and run.result.end_reason == "good_goal"
    assert 1 < run.result.scripts_used < 30


def test_logged_actions_read_back_as_written():
    commands = ActionControl().decide('Think("go");back-left x3').commands
    assert [move_text(c) for c in commands[1:]] == ["back-left x3"]
    assert move_text({"op": "Go", "arg": 3}) == "Go(3)"
