"""The installed ``llm-aai`` command (pyproject's console script) reaches every module CLI."""

import importlib
import tomllib
from pathlib import Path

import pytest


def installed_main():
    project = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    module, function = project["project"]["scripts"]["llm-aai"].split(":")
    return getattr(importlib.import_module(module), function)


def test_console_script_dispatches_to_the_module_commands(capsys):
    main = installed_main()
    assert main(["arenas", "list", "--level", "2"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert listed[0].split()[0] == "task" and len(listed) == 5  # header + 4 tasks of level 2
    assert all(line.startswith("02-") for line in listed[1:])


@pytest.mark.parametrize("argv", [[], ["bogus"]])
def test_console_script_without_a_known_command_lists_the_commands(argv, capsys):
    assert installed_main()(argv) == 2
    shown = capsys.readouterr()
    assert "usage: llm-aai COMMAND" in shown.out + shown.err
    for command in ("run", "analyze", "replay", "play", "arenas", "view"):
        assert f"  {command} " in shown.out + shown.err
