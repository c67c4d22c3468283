"""Property-based tests (hypothesis) of the script language, plus the recording's scripts."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llm_aai.script import (
    DEFAULT_LIMITS,
    Go,
    Script,
    ScriptError,
    Think,
    Turn,
    format_script,
    parse_script,
)

thoughts = st.text(st.characters(blacklist_characters=")"), max_size=40)
movement = st.one_of(
    st.builds(Go, st.integers(-DEFAULT_LIMITS.max_go, DEFAULT_LIMITS.max_go)),
    st.builds(Turn, st.integers(-DEFAULT_LIMITS.max_turn, DEFAULT_LIMITS.max_turn)),
)
scripts = st.lists(st.one_of(st.builds(Think, thoughts), movement), min_size=1, max_size=8).filter(
    lambda cs: Script(tuple(cs)).n_steps <= DEFAULT_LIMITS.max_steps
).map(lambda cs: Script(tuple(cs)))


@given(scripts, st.sampled_from(["strict", "lenient"]))
def test_format_then_parse_round_trips(script, mode):
    assert parse_script(format_script(script), mode=mode) == script


@given(scripts)
def test_actions_follow_the_commands(script):
    actions = script.actions()
    assert len(actions) == script.n_steps
    assert all(a in {(1, 0), (2, 0), (0, 1), (0, 2)} for a in actions)
    expected = 0
    for command in script.commands:
        if isinstance(command, Go):
            expected += abs(command.steps)
        elif isinstance(command, Turn):
            expected += int(abs(command.degrees) / 6)
    assert len(actions) == expected


# Replies built from the language's own pieces hit far more branches than uniform text.
pieces = st.sampled_from(
    ["Think", "think", "Go", "go", "TURN", "Turn", "(", ")", ";", '"', "'", "-", "--", "3", "12",
     "999999999999999", ".5", " ", "\n", "\t", "\r", "```", "```py\n", "text", ",", "(yellow)"]
)
structured = st.lists(pieces, max_size=30).map("".join)


@settings(max_examples=300)
@given(st.one_of(st.text(), structured), st.sampled_from(["strict", "lenient"]))
def test_any_text_parses_or_raises_script_error_only(text, mode):
    try:
        script = parse_script(text, mode=mode)
    except ScriptError as err:
        assert err.line >= 1 and err.column >= 1 and "^" in err.excerpt
        return
    assert script.n_steps <= DEFAULT_LIMITS.max_steps
    # Whatever was accepted has a canonical form that strict mode reads back the same.
    assert parse_script(format_script(script)) == script


@given(st.one_of(st.text(), structured))
def test_lenient_accepts_everything_strict_accepts_unchanged(text):
    try:
        strict = parse_script(text)
    except ScriptError:
        return
    lenient = parse_script(text, mode="lenient")
    assert lenient == strict and lenient.normalizations == ()


def test_every_recorded_script_parses_strictly(recording_dir):
    lines = (recording_dir / "scripts.txt").read_text().splitlines()
    assert len(lines) == 42
    steps = [parse_script(line).n_steps for line in lines]
    # Steps per script as the recording's file names (obs-<script>.<steps>) record them.
    # The last script (Go(10)) ended the episode, so the harness took no observation after it.
    recorded = {}
    for name in (recording_dir / "observations").glob("obs-*.jpg"):
        turn, count = name.stem.removeprefix("obs-").split(".")
        if turn != "0":
            recorded[int(turn)] = int(count)
    assert recorded == {i + 1: s for i, s in enumerate(steps[:-1])}
    assert steps[-1] == 10


@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_recorded_thoughts_survive(recording_dir, mode):
    line = (recording_dir / "scripts.txt").read_text().splitlines()[0]
    script = parse_script(line, mode=mode)
    assert script.thoughts == ("I can move forwards and backwards with Go",)
    assert script.commands[1:] == (Go(3),)
