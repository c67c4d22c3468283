"""Renamed flags: the old spelling still sets the setting, with a one-line note on stderr."""

from __future__ import annotations

import pytest

from llm_aai.cli.run import build_parser, config_from_args


def _config(*flags):
    return config_from_args(build_parser().parse_args(["--model", "heuristic", *flags]))


def test_the_old_frame_flag_sets_the_perspective_with_a_note(capsys):
    config = _config("--observation", "text", "--frame", "allocentric")
    assert config.perspective == "allocentric"
    assert capsys.readouterr().err.splitlines() == [
        "note: --frame is deprecated; use --perspective"]


def test_the_new_perspective_flag_says_nothing(capsys):
    assert _config("--observation", "text", "--perspective", "allocentric").perspective \
        == "allocentric"
    assert capsys.readouterr().err == ""


def test_the_old_flag_still_checks_its_choices(capsys):
    with pytest.raises(SystemExit):
        _config("--frame", "north-up")
    assert "invalid choice: 'north-up'" in capsys.readouterr().err


def test_the_old_frame_control_is_action_control_with_a_note(capsys):
    config = _config("--control", "frame", "--max-replies", "9")
    assert config.modes.control == "action" and config.protocol.max_scripts is None
    assert capsys.readouterr().err.splitlines() == [
        "note: --control frame is deprecated; use --control action"]
