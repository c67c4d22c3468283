"""Permanence: where a ball seen earlier and out of view now is, or that it is gone."""

from __future__ import annotations

import pytest

from llm_aai.predict import Asking, Sightings, ask
from llm_aai.predict.permanence import AHEAD_HIDDEN, GONE, side_of
from tests.predict.conftest import TWO_BALLS, arena_text, item

HIDDEN = arena_text(
    item("Agent", 20, 5),
    item("GoodGoalMulti", 26, 25),                # seen past the wall's near end at the start
    item("Wall", 23, 23, size=(1, 3, 14)),        # z 16 to 30: hides it once the agent is closer
    item("GoodGoal", 5, 35),
)
COLLECTED = arena_text(
    item("Agent", 20, 10),
    item("GoodGoalMulti", 20, 16),                # 6 m ahead: a Go(12) runs through it
    item("GoodGoal", 35, 35),                     # keeps the episode going after it
)


def _played(episode, replies):
    """Play ``replies``, feeding a recorder after the start and after every turn."""
    sightings = Sightings()
    sightings.record(episode)
    for reply in replies:
        episode.play(reply)
        sightings.record(episode)
    return sightings


@pytest.mark.parametrize(("replies", "where"), [
    (["Turn(90);"], "to your left"),
    (["Turn(-90);"], "to your right"),
    (["Turn(180);"], "behind you"),
    (["Turn(90);", "Turn(90);"], "behind you"),
])
def test_a_ball_turned_away_from_is_beside_or_behind(start, replies, where):
    episode = start(TWO_BALLS)
    sightings = _played(episode, replies)
    question = ask("permanence", Asking(episode, "Go(1);", sightings))
    assert question.about["object"] == "green ball" and question.about["last_seen_turn"] == 0
    assert question.true_text == where
    assert "green ball" in question.text


def test_a_ball_behind_a_wall_is_ahead_but_hidden(start):
    episode = start(HIDDEN)
    sightings = _played(episode, [])
    assert {seen.noun for seen in sightings.remembered()} >= {"yellow ball"}
    assert ask("permanence", Asking(episode, "Go(1);", sightings)) is None  # still in view
    episode.play("Go(8);")
    sightings.record(episode)
    assert "GoodGoalMulti" not in {seen.name for seen in episode.env.in_view()}
    question = ask("permanence", Asking(episode, "Go(1);", sightings))
    assert question.about["object"] == "yellow ball"
    assert question.true_text == AHEAD_HIDDEN


def test_a_collected_yellow_ball_is_no_longer_there(start):
    episode = start(COLLECTED)
    sightings = _played(episode, ["Go(12);"])
    assert episode.wants_reply and episode.totals.reward > 0
    question = ask("permanence", Asking(episode, "Go(1);", sightings))
    assert question.about["object"] == "yellow ball"
    assert question.true_text == GONE


def test_not_asked_without_a_remembered_ball_out_of_view(start):
    episode = start(TWO_BALLS)
    assert ask("permanence", Asking(episode, "Go(1);", Sightings())) is None  # nothing seen
    assert ask("permanence", Asking(episode, "Go(1);", _played(episode, []))) is None  # in view


def test_not_asked_about_a_ball_its_words_do_not_single_out(start):
    episode = start(arena_text(item("Agent", 20, 20), item("BadGoal", 20, 26),
                               item("BadGoal", 20, 14), item("GoodGoal", 35, 35)))
    sightings = _played(episode, ["Turn(90);"])  # both red balls out of view now
    assert ask("permanence", Asking(episode, "Go(1);", sightings)) is None


@pytest.mark.parametrize(("bearing", "side"), [
    (0, AHEAD_HIDDEN), (-30, AHEAD_HIDDEN), (70, "to your right"), (-100, "to your left"),
    (170, "behind you"), (-150, "behind you"),
    (45, None), (-55, None), (125, None), (-135, None),  # too near a border to ask
])
def test_sides_by_bearing(bearing, side):
    assert side_of(bearing) == side
