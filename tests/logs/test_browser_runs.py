"""Telling a run a person played in the browser from the rest, by its manifest's agent."""

from __future__ import annotations

import pytest

from llm_aai.logs.browser import browser_participant, continue_in_browser


def test_a_browser_run_names_its_participant_and_interface():
    agent = {"name": "human", "kind": "builtin",
             "options": {"participant": "p01", "interface": "keys", "order": "01-04-03"}}
    assert browser_participant(agent) == ("p01", "keys")
    assert "/?control=keys" in continue_in_browser("out/human-keys-p01", "p01", "keys")


@pytest.mark.parametrize("agent", [
    {"name": "human", "kind": "builtin", "options": {}},  # a person at the terminal
    {"name": "human", "options": {"participant": "p01"}},
    {"name": "human", "options": {"participant": 5, "interface": "script"}},
    {"name": "litellm", "options": {"participant": "p01", "interface": "script"}},
    {"name": "human", "options": None},
    {},
])
def test_other_runs_are_not_browser_runs(agent):
    assert browser_participant(agent) is None
