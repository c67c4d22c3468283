"""The letter reader: lenient with the shapes of one answer, never guessing between two."""

from __future__ import annotations

import pytest

from llm_aai.predict import read_answer
from llm_aai.predict.dynamics import CHOICES as MOVES
from llm_aai.predict.outcomes import OUTCOMES
from llm_aai.predict.permanence import CHOICES as SIDES
from llm_aai.predict.question import lettered

OUTCOME_CHOICES = lettered(OUTCOMES)  # A green, B yellow, C red, D death zone, E hot zone, F none
SIDE_CHOICES = lettered(SIDES)        # A left, B right, C behind, D ahead but hidden, E gone
MOVE_CHOICES = lettered(MOVES)        # A nearer, B farther, C left, D right, E stays


@pytest.mark.parametrize(("reply", "letter"), [
    ("B", "B"),
    ("b", "B"),
    ("b)", "B"),
    ("(B)", "B"),
    ("B.", "B"),
    (" B \n", "B"),
    ("B) a yellow ball", "B"),
    ("B) the green ball", "B"),   # the letter is what was answered, whatever words follow
    ("The answer is B.", "B"),
    ("the answer is b", "B"),
    ("Answer: B", "B"),
    ("answer: (c)", "C"),
    ("I think B", "B"),
    ("C: a red ball", "C"),
    ("My answer is a red ball.", "C"),  # "a" here is the article, the words name C
    ("A red ball", "C"),
    ("yellow ball", "B"),
    ("The yellow ball.", "B"),
    ("an orange hot zone", "E"),
    ("None of these before the commands end", "F"),
    ("A", "A"),
    ("a)", "A"),
])
def test_known_answers(reply, letter):
    assert read_answer(reply, OUTCOME_CHOICES) == letter


@pytest.mark.parametrize("reply", [
    "A or B",
    "(A) or (B)",
    "A) or B)",
    "The answer is A. No, the answer is B.",
    "G",                  # no such choice
    "Answer: Z",
    "",
    "I don't know",
    "a ball",             # fits the green, yellow and red balls alike
    "a green ball or a red ball",
    "none",               # part of a choice's words only
])
def test_ambiguous_or_empty_replies_read_as_no_answer(reply):
    assert read_answer(reply, OUTCOME_CHOICES) is None


@pytest.mark.parametrize(("reply", "choices", "letter"), [
    ("further to your left", MOVE_CHOICES, "C"),   # not also "to your left" of another list
    ("to your left", SIDE_CHOICES, "A"),
    ("behind you", SIDE_CHOICES, "C"),
    ("It is ahead of you, but hidden behind something.", SIDE_CHOICES, "D"),
    ("about where it is now", MOVE_CHOICES, "E"),
    ("farther from you", MOVE_CHOICES, "B"),
])
def test_the_words_of_one_choice_alone(reply, choices, letter):
    assert read_answer(reply, choices) == letter


def test_a_choice_inside_a_longer_one_yields_to_it():
    choices = lettered(["to your left", "further to your left"])
    assert read_answer("further to your left", choices) == "B"
    assert read_answer("to your left", choices) == "A"
