"""Presets declared where their choice lives: the agent, the control and the prompt.

The command line and the runner hold no agent or prompt names: a new agent that declares a
preset gets it from the same command line, and a rule's error names the flag.
"""

from __future__ import annotations

import dataclasses

import pytest

from llm_aai.agents import AGENTS, AgentEntry
from llm_aai.agents.registry import ORACLE_FRAMES_MAX_REPLIES
from llm_aai.cli.run import build_parser, config_from_args, flag_of
from llm_aai.protocol import PAPER_PROTOCOL
from llm_aai.protocol.presets import SET, ConfigError, Preset
from llm_aai.runner.presets import apply_presets
from llm_aai.settings import RunConfig


def config_of(*flags: str) -> RunConfig:
    return config_from_args(build_parser().parse_args(["--model", *flags]))


def test_the_per_frame_oracle_brings_frame_control_and_no_script_cap():
    config = config_of("oracle-frames")
    assert config.modes.control == "action" and config.protocol.max_scripts is None
    assert config.protocol.max_replies == ORACLE_FRAMES_MAX_REPLIES
    assert config_of("oracle-frames", "--max-replies", "50").protocol.max_replies == 50


def test_frame_control_brings_no_script_cap():
    config = config_of("heuristic", "--control", "action", "--max-replies", "9")
    assert config.protocol.max_scripts is None and config.protocol.max_replies == 9


def test_a_choices_requirement_is_refused_on_the_choice_naming_the_flags():
    with pytest.raises(ConfigError) as raised:
        config_of("oracle-frames", "--max-scripts", "5")
    assert raised.value.setting == "model"
    assert raised.value.says(flag_of) == (
        "--model oracle-frames acts per step, with no script cap: give --control action and "
        "bound it with --max-replies")
    assert str(raised.value).startswith("model oracle-frames acts per step")  # the library's
    with pytest.raises(ConfigError, match="model replay needs replay_from EPISODE_DIR"):
        config_of("replay")


def test_the_plan_prompt_plays_one_script_however_it_is_started():
    assert apply_presets(RunConfig(model="heuristic", prompt="plan")).protocol.max_scripts == 1
    assert config_of("heuristic", "--prompt", "plan").protocol.max_scripts == 30  # until run
    assert apply_presets(RunConfig(model="heuristic")).protocol == PAPER_PROTOCOL


def test_a_new_agent_declares_its_preset_and_no_flag_or_branch_changes(monkeypatch):
    steady = Preset("model", "steady", defaults={"modes.control": "action",
                                                 "protocol.max_scripts": None,
                                                 "protocol.max_replies": 7},
                    requires={"oracle_budget": SET}, why="needs {oracle_budget}")
    entry = dataclasses.replace(AGENTS["heuristic"], preset=steady)
    monkeypatch.setitem(AGENTS, "steady", entry)
    config = config_of("steady", "--oracle-budget", "5")
    assert (config.modes.control, config.protocol.max_replies) == ("action", 7)
    with pytest.raises(ConfigError) as raised:
        config_of("steady")
    assert raised.value.says(flag_of) == "--model steady needs --oracle-budget"
    assert isinstance(entry, AgentEntry)


@pytest.mark.parametrize("values, setting, says", [
    ({"unity_build": "x"}, "unity_build", "--unity-build needs --backend unity"),
    ({"backend": "unity", "physics_build": "2019"}, "physics_build",
     "--physics-build 2019 chooses the embedded simulator's physics"),
    ({"modes.control": "action", "protocol.max_replies": 5}, "protocol.max_scripts",
     "--max-scripts caps scripts; --control action counts replies: use --max-replies"),
    ({"protocol.max_scripts": None}, "protocol.max_replies",
     "--max-replies is needed without the script cap"),
    ({"modes.filmstrip": True}, "modes.filmstrip",
     "--filmstrip joins the frames of --observe-every N: give --observe-every"),
    ({"modes.order": "shuffled"}, "modes.order",
     "--order shuffled orders the tasks of one conversation: give --context across-tasks"),
    ({"model_options.timeout_s": -1.0}, "model_options.timeout_s",
     "--timeout must be greater than 0, not -1"),
    ({"level": " "}, "level", "--level is empty"),
])
def test_every_rule_between_fields_lives_in_the_config_and_names_its_field(values, setting,
                                                                          says):
    with pytest.raises(ConfigError) as raised:
        RunConfig.from_values({"model": "m", **values})
    assert raised.value.setting == setting
    assert raised.value.says(flag_of).startswith(says)
