"""``--observe-every N`` (and ``--filmstrip``) end to end, and ``--max-scripts 0``."""

from __future__ import annotations

import pytest

from llm_aai.filmstrip import filmstrip
from llm_aai.protocol import EpisodeProtocol
from llm_aai.protocol.modes import ModeSettings
from llm_aai.protocol.observe_every import EveryNSteps
from llm_aai.replay import load_episode, resimulate
from tests.helpers.modes import green_pixels, images_of, text_of

EVERY_6 = ModeSettings(observe_every=6)
TWO_SCRIPTS = EpisodeProtocol(max_scripts=2)
GOAL_TO_THE_RIGHT = (26, 10)  # 6 m to the agent's right: outside its 100-degree view


def test_cutting_every_n_keeps_every_action_in_order():
    actions = [(0, 1)] * 14
    runs = EveryNSteps(6).runs(actions)
    assert [len(run) for run in runs] == [6, 6, 2]
    assert [a for run in runs for a in run] == actions
    assert EveryNSteps(6).runs([]) == ([],)


def test_a_turn_past_the_goal_hides_it_in_the_papers_mode(run_mode, mode_arena):
    run = run_mode(mode_arena(t=100, goal=GOAL_TO_THE_RIGHT), ["Turn(180);", "Go(1);"],
                   protocol=TWO_SCRIPTS)
    opening, after_turn = images_of(run.last_user(0)), images_of(run.last_user(1))
    assert len(opening) == 3 and len(after_turn) == 1
    assert max(green_pixels(image) for image in opening + after_turn) == 0


def test_a_turn_past_the_goal_shows_it_with_observe_every_6(run_mode, mode_arena):
    run = run_mode(mode_arena(t=100, goal=GOAL_TO_THE_RIGHT), ["Turn(180);", "Go(1);"],
                   protocol=TWO_SCRIPTS, modes=EVERY_6)
    sent = images_of(run.last_user(1))
    assert len(sent) == 5  # after steps 6, 12, 18, 24 and 30 of the 30-step turn
    green = [green_pixels(image) for image in sent]
    assert any(green[:-1]) and green[-1] == 0, green  # seen during the turn, not after it
    text = text_of(run.last_user(1))
    assert "after steps 6, 12, 18, 24 and 30 of your last reply" in text
    assert "Your remaining health is" in text
    assert "a picture is taken every 6 steps" in run.bodies[0]["messages"][0]["content"]
    assert run.turns[2].sent_images[-1].endswith("turn-002-4.jpg")
    report = resimulate(load_episode(run.run_dir / "episodes" / "01-04-03_t1"))
    assert report.ok, report.render()
    assert "frame during 3" in report.render()  # the frames in between were checked too


def test_a_filmstrip_sends_two_images_labelled_by_step(run_mode, mode_arena):
    run = run_mode(mode_arena(t=100, goal=GOAL_TO_THE_RIGHT), ["Turn(180);", "Go(1);"],
                   protocol=TWO_SCRIPTS, modes=ModeSettings(observe_every=6, filmstrip=True))
    strip, now = images_of(run.last_user(1))
    assert strip.shape == (12 + 32, 128, 3) and now.shape == (64, 64, 3)  # 4 cells in a row
    assert green_pixels(strip) > 0 and green_pixels(now) == 0
    assert "strip of frames taken after steps 6, 12, 18 and 24" in text_of(run.last_user(1))
    report = resimulate(load_episode(run.run_dir / "episodes" / "01-04-03_t1"))
    assert report.ok and "filmstrip" in report.render(), report.render()


def test_a_script_shorter_than_n_sends_the_one_frame_as_the_paper(run_mode, mode_arena):
    run = run_mode(mode_arena(t=100, goal=(30, 30)), ["Go(4);", "Go(1);"],
                   protocol=TWO_SCRIPTS, modes=EVERY_6)
    assert len(images_of(run.last_user(1))) == 1
    assert "after step" not in text_of(run.last_user(1))


def test_filmstrip_labels_need_one_step_per_frame():
    with pytest.raises(ValueError, match="one step per frame"):
        filmstrip([], [])


def test_no_script_cap_plays_past_30_scripts_to_the_guard(run_mode, mode_arena):
    run = run_mode(mode_arena(t=1000, goal=(30, 30)), [], default="Turn(6);",
                   protocol=EpisodeProtocol(max_scripts=None, max_replies=33, run_out_clock=False))
    assert len(run.bodies) == 33 and run.result.scripts_used == 33
    assert run.result.end_reason == "reply_guard"


def test_no_script_cap_ends_at_the_time_limit(run_mode, mode_arena):
    # t=60: 100 steps; 49 before the first script, then 10 a script: the 6th reaches it
    run = run_mode(mode_arena(t=60, goal=(30, 30)), [], default="Turn(60);",
                   protocol=EpisodeProtocol(max_scripts=None, max_replies=500))
    assert len(run.bodies) == 6 and run.result.end_reason == "time_limit"
