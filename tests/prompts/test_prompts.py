from __future__ import annotations

import hashlib

import pytest
import yaml

from llm_aai.prompts import (
    PROMPTS,
    TURN_FIELDS,
    load_prompt,
    load_prompt_set,
    load_turn_messages,
)
from llm_aai.prompts import _parse_turns as parse_turns
from llm_aai.script import parse_script


def test_react_prompt_loads_with_hash():
    prompt = load_prompt("react")
    assert prompt.sha256 == hashlib.sha256(prompt.text.encode()).hexdigest()
    assert prompt.system_text == prompt.text
    for topic in ("Think(", "Go(", "Turn(", "40 metres", "100 degrees", "6 degrees",
                  "Turn(90)", "Go(35)", "yellow", "green", "red", "orange", "health",
                  "Glass walls", "Ramps", "Tunnels", "Pushable boxes", "U-shaped"):
        assert topic in prompt.text, topic


def test_manifest_extras_pin_the_turn_messages():
    prompt = load_prompt_set("react")
    extra = prompt.extra_manifest()
    assert extra["turn_messages"]["preamble"] == "Observation captured."
    assert len(extra["turn_messages_sha256"]) == 64


def test_every_example_reply_in_the_prompt_parses_strictly():
    lines = [line for line in load_prompt().text.splitlines()
             if line.startswith(("Think(", "Go(", "Turn("))]
    assert len(lines) >= 3
    for line in lines:
        assert parse_script(line, mode="strict").commands


def test_turn_messages_render():
    messages = load_turn_messages("react")
    assert messages.preamble == "Observation captured."
    assert messages.observation(87.24) == "Your remaining health is 87.2."
    assert messages.initial(99.94) == "Your remaining health is 99.9."
    assert "bad reply" in messages.invalid_reply("bad reply")
    assert "-1.000" in messages.episode_end(-1.0, 0.0)
    example = messages.invalid_reply("x").split("example: ", 1)[1]
    assert parse_script(example, mode="strict").commands


def test_prompt_from_a_file(tmp_path):
    path = tmp_path / "mine.md"
    path.write_text("Collect the balls.", encoding="utf-8")
    prompt = load_prompt(path)
    assert prompt.text == "Collect the balls." and prompt.name == str(path)
    with pytest.raises(FileNotFoundError):
        load_prompt(tmp_path / "absent.md")


def test_unknown_name_lists_registered():
    with pytest.raises(KeyError, match="react"):
        load_prompt("nope")
    assert "react" in PROMPTS


@pytest.mark.parametrize(("text", "match"), [
    ("observation: '{hp}'", "missing messages"),
    ("- a list", "mapping"),
])
def test_turn_file_validation(text, match):
    with pytest.raises(ValueError, match=match):
        parse_turns(text, "x.yaml")


def test_unknown_placeholder_is_rejected():
    fields = dict(load_turn_messages().templates)
    assert set(fields) == set(TURN_FIELDS)
    fields["observation"] = "Health {hp}"
    with pytest.raises(ValueError, match="hp"):
        parse_turns(yaml.safe_dump(fields), "x.yaml")
