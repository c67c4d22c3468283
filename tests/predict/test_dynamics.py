"""Dynamics: where a moving object in view will be after a few seconds of standing still."""

from __future__ import annotations

import pytest

from llm_aai.predict import Asking, ask
from llm_aai.predict.dynamics import FARTHER, LEFT, NEARER, RIGHT, STAYS, moved
from tests.predict.conftest import arena_text, item

AWAY = arena_text(
    item("Agent", 18, 1),
    item("GoodGoalBounce", 22, 1),        # rolls toward +z at about 7 m/s from the start
    item("GoodGoal", 35, 35),
)
ACROSS = arena_text(
    item("Agent", 38, 30, rotation=-90),  # facing -x: +z is on its right
    item("GoodGoalBounce", 2, 3),         # rolls toward +z, across the line of sight
    item("GoodGoal", 35, 35),
)
FALLING = arena_text(
    item("Agent", 20, 10),
    item("GoodGoalMulti", 22, 20, y=49),  # still falling when the first question is asked
    item("GoodGoal", 35, 35),
)
STILL = arena_text(item("Agent", 20, 10), item("GoodGoalMulti", 22, 20),
                   item("GoodGoal", 35, 35))


@pytest.mark.parametrize(("text", "noun", "where"), [
    (AWAY, "green ball (moving)", FARTHER),
    (ACROSS, "green ball (moving)", RIGHT),
    (FALLING, "yellow ball", STAYS),
])
def test_where_a_moving_ball_will_be(start, text, noun, where):
    episode = start(text)
    question = ask("dynamics", Asking(episode, "Go(1);"))
    assert question.about["object"] == noun and question.about["seconds"] == 3
    assert question.true_text == where
    assert f"the {noun}" in question.text and "3 seconds" in question.text


def test_not_asked_when_nothing_in_view_moves(start):
    episode = start(STILL)
    assert ask("dynamics", Asking(episode, "Go(1);")) is None


@pytest.mark.parametrize(("after", "where"), [
    ((20, 0, 25), FARTHER), ((20, 0, 15), NEARER), ((17, 0, 20), LEFT), ((23, 0, 20), RIGHT),
    ((20.2, 0, 20.2), STAYS), ((22, 0, 22), None),  # diagonal: neither part is clearly larger
])
def test_the_larger_part_of_the_move_decides(after, where):
    eye = ((20.0, 0.5, 10.0), 0.0)  # looking along +z at a ball at (20, 20)
    assert moved(eye, (20, 0.5, 20), after) == where
