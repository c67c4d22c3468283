"""The animation's frame rate, chosen from the episode's length and kind."""

from __future__ import annotations

import pytest

from llm_aai.replay import load_episode
from llm_aai.replay.pace import per_action, pick_fps


@pytest.mark.parametrize(("frames", "action", "fps"), [
    (12, False, 1.0), (60, False, 1.0), (90, False, 1.5), (600, False, 10.0),  # <= 60 s
    (9, True, 2.0), (54, True, 3.6), (150, True, 10.0), (5000, True, 12.0),  # about 15 s
])
def test_the_rate_bounds_the_animation_s_length(frames, action, fps):
    assert pick_fps(frames, action=action) == fps


def test_a_keyboard_episode_of_54_frames_plays_in_15_s_not_54():
    assert 54 / pick_fps(54, action=True) == 15.0


def test_script_episodes_are_not_per_action(runs):
    for kind in ("heuristic", "llm", "human"):
        episode = load_episode(next((runs[kind] / "episodes").glob("*_t1")))
        assert not per_action(episode)
