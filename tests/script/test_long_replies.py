"""A reply of one huge word: the feedback quotes a bounded part of it, the caret still right.

The feedback goes back to the model and stays in the conversation, so a message quoting the
model's whole line made every later request carry a 1 MB word twice (issue 51).
"""

from __future__ import annotations

import pytest

from llm_aai.protocol.action_control import ActionControl
from llm_aai.protocol.control import ScriptControl
from llm_aai.script import ScriptError, parse_script

MB = 1_000_000
FEEDBACK_MOST = 400
"""Far more than any message needs (about 200 characters), far less than a reply of 1 MB."""


def refusal(reply: str, mode: str) -> str:
    decision = ScriptControl(mode=mode).decide(reply)
    assert decision.refused, reply[:40]
    return decision.error


def caret_points_at(message: str) -> str:
    """The character of the excerpt above the caret (the message's last two lines)."""
    shown, caret = message.splitlines()[-2:]
    return shown[caret.index("^")]


@pytest.mark.parametrize("mode", ["strict", "lenient"])
@pytest.mark.parametrize("reply", [
    "X" * MB,                          # an unknown command, the whole reply
    "Go(1);" + "Q" * MB,               # an unknown command after a valid one
    "Go(1);\n" + "Q" * MB + "(1);",    # on a later line, with a parenthesis
    "Go(" + "9" * MB + ");",           # out of range
    'Think("' + "a" * MB + '")Go(1);',  # a missing ';' after a huge thought
    "Go(1) " + "z" * MB,               # what follows a missing ';'
    "Turn(5);Go(" + "x" * MB + ");",   # not a number
])
def test_the_feedback_on_a_huge_reply_is_bounded(reply, mode):
    decision = ScriptControl(mode=mode).decide(reply)
    if decision.refused:  # lenient reading may drop the text after a command instead
        assert len(decision.error) < FEEDBACK_MOST, decision.error[:300]
    assert sum(map(len, decision.notes)) < FEEDBACK_MOST


def test_a_huge_name_written_in_another_case_is_quoted_in_part():
    reply = "g" + " " * MB + "o(1);"  # separators may stand between a name's letters
    assert len(refusal(reply, "strict")) < FEEDBACK_MOST
    lenient = ScriptControl(mode="lenient").decide(reply)
    assert lenient.actions and sum(map(len, lenient.notes)) < FEEDBACK_MOST


def test_an_unknown_command_is_named_by_its_start_with_an_ellipsis():
    message = refusal("Y" * MB, "strict")
    assert "unknown command 'YYYYYYYYYY" in message and "'..." in message
    assert caret_points_at(message) == "Y"


@pytest.mark.parametrize("at", [0, 5, 500, MB // 2, MB - 3])
def test_the_caret_stays_under_the_error_in_the_excerpt(at):
    # one character that is no command letter, somewhere in a long thought's missing ';'
    reply = "Think(" + "a" * at + ")#" + "b" * (MB - at)
    with pytest.raises(ScriptError) as info:
        parse_script(reply)
    error = info.value
    assert error.column == len("Think(") + at + 2  # the '#' after ')'
    assert caret_points_at(str(error)) == "#"
    assert len(str(error)) < FEEDBACK_MOST
    shown = str(error).splitlines()[-2]
    assert ("..." in shown[:6]) == (error.column > 40)  # the cut before it is marked


def test_a_short_line_is_quoted_whole_as_before():
    message = refusal('Think("go far");Go(150);', "strict")
    assert message == ("line 1, column 20: Go(150) is out of range: Go takes -100 to 100 "
                       "steps; split a longer move into several commands\n"
                       '  Think("go far");Go(150);\n'
                       "                     ^")
    assert "unknown command 'Move'" in refusal("Go(3);\nMove(2);", "strict")


@pytest.mark.parametrize("mode", ["strict", "lenient"])
@pytest.mark.parametrize(("reply", "says"), [
    ("j" * MB, "is not an action"),
    ("forward x" + "9" * 5000, "repeats 1 to"),  # int() refuses over 4,300 digits
    ("forward x" + "7" * MB, "repeats 1 to"),
])
def test_an_action_reply_of_a_huge_word_or_count_is_refused_in_few_words(reply, says, mode):
    decision = ActionControl(mode).decide(reply)
    assert decision.refused and says in decision.error
    assert len(decision.error) < FEEDBACK_MOST


def test_an_action_count_with_leading_zeros_is_still_read():
    assert ActionControl().decide("forward x0000000003").actions == ((1, 0),) * 3
