"""``ScriptControl`` read leniently: a copy of our own feedback is refused, not run (#35)."""

from __future__ import annotations

import pytest

from llm_aai.prompts import load_turn_messages
from llm_aai.protocol import ScriptControl

FEEDBACK = load_turn_messages("react").invalid_reply("")
EXAMPLE = 'Think("The ball is ahead and slightly left.");Turn(-12);Go(10);'


def test_the_feedback_shows_the_example_the_tests_copy():
    assert EXAMPLE in FEEDBACK


@pytest.mark.parametrize("reply", [
    EXAMPLE,  # the example script, as the feedback shows it
    f"Sure.\n{EXAMPLE}",  # with prose around it
    'think("The ball is ahead and slightly left.")\nturn(-12)\ngo(10)',  # repaired to it
    load_turn_messages("react").invalid_reply("missing ';' after Go(2)"),  # the whole message
    "The animal did not move. Reply with commands only, each ending with a semicolon,\n"
    "Go(3);",  # one of its lines, then a script
])
def test_a_reply_repeating_our_feedback_is_refused_when_read_leniently(reply):
    decision = ScriptControl("lenient", our_text=(FEEDBACK,)).decide(reply)
    assert decision.refused and "repeats our message" in decision.error
    assert decision.actions == ()


def test_the_models_own_scripts_still_run():
    control = ScriptControl("lenient", our_text=(FEEDBACK,))
    for reply in ('Think("The ball is to my left.");Turn(-12);Go(10);', "Turn(-12);Go(10);",
                  "Go(5);"):
        decision = control.decide(reply)
        assert not decision.refused and decision.actions, reply


def test_strict_reading_takes_the_example_as_the_paper_did():
    decision = ScriptControl("strict", our_text=(FEEDBACK,)).decide(EXAMPLE)
    assert not decision.refused and len(decision.actions) == 12  # 2 turning steps, 10 forward
