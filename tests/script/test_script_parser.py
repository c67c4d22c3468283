"""Unit tests: every grammar rule and every error message of the script parser."""

from __future__ import annotations

import pickle

import pytest

from llm_aai.script import (
    Go,
    Script,
    ScriptError,
    ScriptLimits,
    Think,
    Turn,
    format_script,
    parse_script,
)


def commands(text: str, mode: str = "strict") -> tuple:
    return parse_script(text, mode=mode).commands


def error(text: str, mode: str = "strict") -> ScriptError:
    with pytest.raises(ScriptError) as info:
        parse_script(text, mode=mode)
    return info.value


# -- what strict mode accepts -------------------------------------------------------------


def test_the_three_commands():
    assert commands('Think("look");Go(3);Turn(-30);') == (Think("look"), Go(3), Turn(-30))


def test_single_and_double_quotes_and_no_quotes():
    assert commands("Think('a');") == (Think("a"),)
    assert commands('Think("a");') == (Think("a"),)
    # The paper's grammar never required quotes.
    assert commands("Think(I see a wall);") == (Think("I see a wall"),)


def test_quotes_carry_no_escapes_only_the_outer_pair_is_removed():
    assert commands("Think(\"It's 'far'\");") == (Think("It's 'far'"),)
    assert commands('Think(\'say "hi"\');') == (Think('say "hi"'),)
    assert commands('Think("a\\"b");') == (Think('a\\"b'),)
    assert commands('Think(");') == (Think('"'),)  # a lone quote is not a pair


def test_thought_keeps_inner_spaces_and_newlines_and_may_hold_semicolons_and_open_parens():
    assert commands('Think( "two  words;\nsecond line (" );') == (
        Think("two  words;\nsecond line ("),
    )


def test_empty_thought():
    assert commands("Think();Think(\"\");") == (Think(""), Think(""))


def test_spaces_and_newlines_anywhere_outside_thoughts_as_in_the_paper():
    assert commands(" Go ( - 3 ) ;\n\nTurn(90) ; ") == (Go(-3), Turn(90))
    # The paper removed every space before matching, so even these were accepted.
    assert commands("G o(1 0);") == (Go(10),)


def test_the_recordings_space_after_semicolon():
    assert commands('Think("x"); Go(15);') == (Think("x"), Go(15))


def test_zero_and_leading_zeros():
    assert commands("Go(0);Turn(-0);Go(007);") == (Go(0), Turn(0), Go(7))


# -- actions ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Go(3);", [(1, 0)] * 3),
        ("Go(-2);", [(2, 0)] * 2),
        ("Turn(30);", [(0, 1)] * 5),
        ("Turn(5);", []),
        ("Turn(6);", [(0, 1)]),
        ("Turn(-50);", [(0, 2)] * 8),
        ("Turn(-15);", [(0, 2)] * 2),
        ("Turn(120);", [(0, 1)] * 20),
        ('Think("x");', []),
        ("Go(1);Turn(-6);Go(-1);", [(1, 0), (0, 2), (2, 0)]),
    ],
)
def test_actions(text, expected):
    script = parse_script(text)
    assert script.actions() == expected
    assert script.n_steps == len(expected)


def test_thoughts_in_order():
    script = parse_script('Think("a");Go(1);Think(\'b\');')
    assert script.thoughts == ("a", "b")


# -- errors (strict) ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "reason", "line", "column"),
    [
        ("", "the script is empty", 1, 1),
        ("  \n ", "the script is empty", 2, 2),
        ("Go(3)", "missing ';' after Go(3), found the end of the script", 1, 6),
        ("Go(3)Turn(6);", "missing ';' after Go(3), found 'Turn(6);'", 1, 6),
        ("go(3);", "command names are case-sensitive: write 'Go', not 'go'", 1, 1),
        ("Go(3);\nMove(2);", "unknown command 'Move'", 2, 1),
        ("Go 3;", "expected '(' after Go, found '3;'", 1, 4),
        ("Go(3.5);", "Go takes whole numbers only (no decimals)", 1, 5),
        ("Turn(9,5);", "Turn takes whole numbers only", 1, 7),
        ("Go();", "Go takes a whole number, e.g. Go(5); found ');'", 1, 4),
        ("Go(+3);", "Go takes a whole number", 1, 4),
        ("Go(five);", "Go takes a whole number", 1, 4),
        ("Go(--3);", "Go has more than one minus sign", 1, 4),
        ("Go(3 x);", "expected ')' after the number in Go, found 'x);'", 1, 6),
        ("Go(3);;", "unexpected ';'", 1, 7),
        (";", "unexpected ';'", 1, 1),
        ("Go(3);\tGo(1);", "unexpected whitespace '\\t'", 1, 7),
        ("Go(3);\r\n", "unexpected whitespace '\\r'", 1, 7),
        ("```\nGo(3);\n```", "without code fences", 1, 1),
        ('Think("abc', "Think( is never closed", 1, 6),
        ('Think("a (b) c");', "a thought may not contain parentheses", 1, 12),
        ("Here you go: Go(3);", "unknown command 'Here you go'", 1, 1),
        ("Go(3); 42", "expected a command (Think, Go or Turn), found '42'", 1, 8),
    ],
)
def test_strict_errors(text, reason, line, column):
    err = error(text)
    assert reason in err.reason
    assert (err.line, err.column) == (line, column)
    assert str(err).startswith(f"line {line}, column {column}: ")


def test_error_excerpt_shows_the_line_and_a_caret_under_the_column():
    err = error('Go(1);\nThink("ok");Go(2.5);')
    assert err.excerpt == '  Think("ok");Go(2.5);\n' + " " * 18 + "^"
    assert (err.line, err.column) == (2, 17)
    assert str(err).endswith(err.excerpt)


def test_excerpt_of_a_long_line_is_clipped_around_the_column():
    text = "Go(1);" * 30 + "Go(x);"
    err = error(text)
    shown, caret = err.excerpt.split("\n")
    assert len(shown) < 90 and shown.strip().startswith("...")
    assert shown[caret.index("^")] == "x"


def test_script_error_is_a_value_error_and_pickles():
    err = error("Go(;")
    assert isinstance(err, ValueError)
    again = pickle.loads(pickle.dumps(err))
    assert str(again) == str(err)


# -- limits -------------------------------------------------------------------------------


def test_limits_accept_the_boundary_and_reject_beyond():
    assert commands("Go(100);Go(-100);Turn(720);Turn(-720);") == (
        Go(100),
        Go(-100),
        Turn(720),
        Turn(-720),
    )
    err = error("Go(101);")
    assert "Go(101) is out of range: Go takes -100 to 100 steps" in err.reason
    assert "Turn takes -720 to 720 degrees" in error("Turn(-721);").reason


def test_total_steps_limit_names_the_command_that_crosses_it():
    err = error("Go(100);" * 5 + "Turn(6);")
    assert "at most 500" in err.reason and "501 steps" in err.reason
    assert err.column == 41


def test_custom_limits():
    limits = ScriptLimits(max_go=5, max_turn=30, max_steps=6)
    assert parse_script("Go(5);Turn(6);", limits=limits).n_steps == 6
    with pytest.raises(ScriptError, match="at most 6"):
        parse_script("Go(5);Turn(12);", limits=limits)


def test_huge_numbers_are_range_errors_not_crashes():
    err = error("Go(" + "9" * 5000 + ");")
    assert "out of range" in err.reason and len(err.reason) < 200


def test_bad_mode_and_type_are_programming_errors():
    with pytest.raises(ValueError, match="mode"):
        parse_script("Go(1);", mode="loose")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        parse_script(b"Go(1);")  # type: ignore[arg-type]


# -- lenient mode -------------------------------------------------------------------------


def kinds(script: Script) -> list[str]:
    return [n.kind for n in script.normalizations]


def test_lenient_changes_nothing_a_strict_parse_accepts():
    script = parse_script('Think("a");Go(1);', mode="lenient")
    assert script.normalizations == ()


def test_lenient_code_fence_prose_lowercase_and_missing_semicolons():
    reply = (
        "Sure! Here is my plan.\n```python\nthink('I see a ball')\nGO(5)\nturn(-30)\n```\n"
        "This should get me there."
    )
    script = parse_script(reply, mode="lenient")
    assert script.commands == (Think("I see a ball"), Go(5), Turn(-30))
    assert kinds(script) == [
        "code_fence",
        "lowercase_command",
        "missing_semicolon",
        "lowercase_command",
        "missing_semicolon",
        "lowercase_command",
        "missing_semicolon",
    ]
    assert "line 2" in script.normalizations[0].detail


def test_lenient_inline_fence_and_fence_without_commands():
    assert commands("```Go(2);```", "lenient") == (Go(2),)
    # A fenced block without commands is just prose around the script.
    script = parse_script("```\nnothing here\n```\nGo(2);", mode="lenient")
    assert script.commands == (Go(2),)
    assert kinds(script) == ["surrounding_prose"]


def test_lenient_prose_before_and_after():
    script = parse_script("My move: Go(2); Turn(30); Done.", mode="lenient")
    assert script.commands == (Go(2), Turn(30))
    assert kinds(script) == ["surrounding_prose", "surrounding_prose"]


def test_lenient_rejects_prose_between_commands():
    err = error("Go(2); and then Turn(30);", "lenient")
    assert "text between commands" in err.reason
    assert err.column == 8


def test_lenient_runs_a_whole_script_followed_on_later_lines_by_more_commands():
    """A plan for later turns after the script (#35): the script runs, the plan does not."""
    reply = "Go(2); Turn(5);\nNext I will Turn(30); then Go(9);"
    script = parse_script(reply, mode="lenient")
    assert script.commands == (Go(2), Turn(5))
    assert kinds(script) == ["trailing_commands"]
    assert "not run" in str(script.normalizations[0])
    assert "line 2" in str(script.normalizations[0])
    assert error(reply, "strict")  # the paper's grammar still refuses it
    # prose on the script's own line, then a break, is still prose between commands
    assert "text between commands" in error("Go(2); and then\nTurn(30);", "lenient").reason


def test_lenient_still_needs_semicolons_between_commands_on_one_line():
    assert "missing ';' after Go(2)" in error("go(2) Turn(6);", "lenient").reason


def test_lenient_parentheses_in_a_quoted_thought_become_brackets():
    script = parse_script('Think("a ball (yellow) ahead");Go(3);', mode="lenient")
    assert script.commands == (Think("a ball [yellow] ahead"), Go(3))
    assert kinds(script) == ["parentheses_in_thought"]
    assert parse_script(format_script(script)) == script


def test_lenient_other_whitespace_is_noted_once():
    script = parse_script("Go(1);\r\nGo(2);\r\n\tGo(3);", mode="lenient")
    assert script.commands == (Go(1), Go(2), Go(3))
    assert kinds(script) == ["other_whitespace"]


def test_lenient_keeps_the_real_errors():
    assert "whole numbers only" in error("```\ngo(2.5)\n```", "lenient").reason
    assert "out of range" in error("Go(500)", "lenient").reason
    assert "the script is empty" in error("  ", "lenient").reason
    assert "unknown command 'I cannot see it'" in error("I cannot see it.", "lenient").reason


def test_lenient_error_positions_refer_to_the_original_reply():
    err = error("Plan:\n```\nGo(1);\nGo(x);\n```", "lenient")
    assert (err.line, err.column) == (4, 4)


def test_normalizations_do_not_affect_equality():
    assert parse_script("go(1)", mode="lenient") == parse_script("Go(1);")



@pytest.mark.parametrize(("control", "mode"), [
    *((c, "strict") for c in "\x00\x07\x0b\x0c\x1b\x7f\x85"),
    *((c, "lenient") for c in "\x00\x07\x1b\x7f"),  # lenient takes \x0b, \x0c, \x85 as spaces
])
def test_a_control_character_is_reported_by_line_and_column(control, mode):
    err = error(f"Go(3);\nTurn(6);{control}Go(1);", mode)
    assert (err.line, err.column) == (2, 9)
    assert str(err).startswith("line 2, column 9: ") and "position" not in str(err)
    assert err.excerpt.splitlines() == ["  Turn(6);?Go(1);", "          ^"]
