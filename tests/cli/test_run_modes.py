"""The mode flags of ``python -m llm_aai.run``: what they set, and what they refuse."""

from __future__ import annotations

import pytest

from llm_aai.cli.run import build_parser, config_from_args, main
from llm_aai.runner import RunConfig


def config_of(*flags):
    return config_from_args(build_parser().parse_args(["--model", "heuristic", *flags]))


def test_the_default_is_the_papers_mode():
    config = config_of()
    assert config.modes == RunConfig(model="x").modes
    assert config.modes.control == "script" and config.modes.observe_every is None
    assert config.protocol.max_scripts == 30 and config.protocol.max_replies is None


def test_the_mode_flags_set_the_config():
    config = config_of("--control", "action", "--max-replies", "200")
    assert config.modes.control == "action"
    assert config.protocol.max_scripts is None and config.protocol.max_replies == 200
    config = config_of("--observe-every", "6", "--filmstrip", "--max-scripts", "0",
                       "--max-replies", "90")
    assert (config.modes.observe_every, config.modes.filmstrip) == (6, True)
    assert config.protocol.max_scripts is None


@pytest.mark.parametrize(("flags", "says"), [
    (["--observe-every", "0"], "must be at least 1"),
    (["--control", "tank"], "invalid choice"),
])
def test_bad_mode_flags_are_refused_by_the_parser(flags, says, capsys, tmp_path):
    with pytest.raises(SystemExit) as exit_:
        main(["--model", "heuristic", "--out", str(tmp_path), *flags])
    assert exit_.value.code == 2 and says in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize(("flags", "says"), [
    (["--filmstrip"], "error: --filmstrip joins the frames of --observe-every"),
    (["--control", "action", "--max-scripts", "10", "--max-replies", "5"],
     "error: --max-scripts caps scripts; --control action counts replies: use --max-replies"),
    (["--control", "action"], "give --max-replies N as a cost guard"),
    (["--max-scripts", "0"], "give --max-replies N as a cost guard"),
    (["--control", "action", "--prompt", "icl", "--max-replies", "5"],
     "--prompt icl cannot be played with --control action"),
    (["--prompt", "react-frame"], "add --control action"),
])
def test_modes_that_cannot_run_stop_before_anything_is_written(flags, says, capsys, tmp_path,
                                                               testbed_dir):
    code = main(["--model", "heuristic", "--tasks", "01-04-03", "--arenas-dir",
                 str(testbed_dir), "--out", str(tmp_path), "--no-progress", *flags])
    assert code == 2 and says in capsys.readouterr().err
    assert not any(tmp_path.iterdir())
