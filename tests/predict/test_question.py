"""The question record: lettered choices, one truth, chance, and its JSON."""

from __future__ import annotations

import json

import pytest

from llm_aai.predict import AskedIn, Question
from llm_aai.predict.question import lettered

WHERE = AskedIn(turn=3, position=(1.0, 0.5, 2.0), yaw=90.0,
                in_view=({"name": "GoodGoal", "distance": 4.2, "bearing": -3.0},))


def _question(**changes):
    fields = {"kind": "own_outcome", "text": "What first?",
              "choices": lettered(["a green ball", "a red ball", "none of these"]),
              "truth": "B", "asked_in": WHERE, "about": {"script": "Go(3);"}} | changes
    return Question(**fields)


def test_prompt_puts_each_choice_on_its_own_line():
    assert _question().prompt().splitlines() == [
        "What first?", "A) a green ball", "B) a red ball", "C) none of these",
        "Answer with the letter of one choice."]


def test_chance_and_json():
    question = _question()
    assert question.chance == pytest.approx(1 / 3) and question.true_text == "a red ball"
    data = json.loads(json.dumps(question.to_json()))
    assert data == {
        "kind": "own_outcome", "text": "What first?",
        "choices": [["A", "a green ball"], ["B", "a red ball"], ["C", "none of these"]],
        "truth": "B", "chance": pytest.approx(1 / 3),
        "asked_in": {"turn": 3, "position": [1.0, 0.5, 2.0], "yaw": 90.0,
                     "in_view": [{"name": "GoodGoal", "distance": 4.2, "bearing": -3.0}]},
        "about": {"script": "Go(3);"}}


@pytest.mark.parametrize(("changes", "message"), [
    ({"truth": "D"}, "'D' is not a choice"),
    ({"choices": (("A", "x"), ("C", "y"))}, "lettered A, B"),
    ({"choices": (("A", "x"),), "truth": "A"}, "lettered A, B"),
])
def test_a_malformed_question_is_refused(changes, message):
    with pytest.raises(ValueError, match=message):
        _question(**changes)


def test_two_choices_with_the_same_words_are_refused():
    with pytest.raises(ValueError, match="two choices read the same"):
        lettered(["left", "left"])
