"""The presets of a run's choices, gathered from where each is declared.

The agent (``llm_aai.agents.registry``), the control (``llm_aai.protocol.modes``) and the prompt
(``llm_aai.prompts``) each declare what they bring (``Preset``): the command line fills the
settings the user left at their defaults from them (``fill_presets``), and every run applies
their fixed settings and checks their requirements (``apply_presets``). Neither the command line
nor the runner names an agent or a prompt.
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from typing import Any

from llm_aai.agents import agent_preset
from llm_aai.prompts import prompt_spec
from llm_aai.protocol.modes import CONTROL_PRESETS
from llm_aai.protocol.presets import Preset
from llm_aai.settings import RunConfig

__all__ = ["apply_presets", "fill_presets"]

_DECLARED_BY: tuple[tuple[str, Callable[[Any], Preset | None]], ...] = (
    ("model", agent_preset),  # first: the agent may choose the control
    ("modes.control", CONTROL_PRESETS.get),
    ("prompt", lambda name: prompt_spec(name).preset),
)
"""Field -> where its value's preset is declared, in the order they are applied."""


def fill_presets(values: MutableMapping[str, Any], given: set[str]) -> None:
    """Fill in the presets' defaults the user did not give, then check their requirements.

    Args:
        values: every setting by dotted field (``RunConfig.field_paths``), changed in place.
        given: the fields the user set.

    Raises:
        ConfigError: a requirement not met, on the setting whose choice has it (``model``).

    """
    presets = []
    for chosen_by, declared in _DECLARED_BY:
        preset = declared(values[chosen_by])
        if preset is not None:
            values.update({path: value for path, value in preset.defaults.items()
                           if path not in given})
            presets.append(preset)
    for preset in presets:
        preset.check(values.__getitem__)


def apply_presets(config: RunConfig) -> RunConfig:
    """The config with its choices' fixed settings, once their requirements are checked.

    Raises:
        ConfigError: a requirement not met, on the setting whose choice has it.

    """
    for chosen_by, declared in _DECLARED_BY:
        preset = declared(config.value_of(chosen_by))
        if preset is None:
            continue
        preset.check(config.value_of)
        if preset.fixed:
            values = {path: config.value_of(path) for path in config.field_paths()}
            config = RunConfig.from_values({**values, **preset.fixed})
    return config
