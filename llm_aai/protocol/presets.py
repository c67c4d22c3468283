"""What a setting's error is, and the presets a prompt, a mode or an agent declares.

A run's settings (``llm_aai.settings.RunConfig``) are one tree of fields, named by their dotted
path (``"protocol.max_scripts"``). An error in them names the path, so each front end can say
it in its own words (the command line names the flag). Some choices bring settings with them:
the plan-then-act prompt plays one script, action control has no script cap, the per-action
oracle acts per step. Each declares that as a ``Preset`` next to itself (the prompt table,
``ModeSettings``, the agent table), and the runner and the command line apply the presets of
whatever was chosen, with no branch on a name.

This module lives in the protocol layer so that ``ModeSettings`` and everything above it can
raise and declare them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

__all__ = ["SET", "ConfigError", "Preset", "field_names"]

_FIELD = re.compile(r"\{([a-z_][a-z0-9_.]*)\}")


def field_names(text: str, name: Callable[[str], str] = str) -> str:
    """``text`` with each ``{dotted.field}`` spelt by ``name`` (as the field itself by default)."""
    return _FIELD.sub(lambda match: name(match.group(1)), text)


class ConfigError(ValueError):
    """A setting a run cannot use; the message names the setting and what is wrong with it.

    ``problem`` may name other settings as ``{dotted.field}``: ``str(error)`` spells them as
    fields, and ``says(name)`` as a front end calls them (``--backend`` on the command line).

    Attributes:
        setting: the dotted config field refused (``"model_options.timeout_s"``).
        problem: what is wrong with it, without the field's own name.

    """

    def __init__(self, setting: str, problem: str):
        super().__init__(f"{setting} {field_names(problem)}")
        self.setting = setting
        self.problem = problem

    def says(self, name: Callable[[str], str]) -> str:
        """The message with every setting spelt by ``name`` (a field path -> its name)."""
        return f"{name(self.setting)} {field_names(self.problem, name)}"

    def within(self, parent: str) -> ConfigError:
        """The same error raised by a nested record (``ModeSettings``) seen from its parent."""
        return ConfigError(f"{parent}.{self.setting}",
                           _FIELD.sub(lambda m: f"{{{parent}.{m.group(1)}}}", self.problem))


class _Set:
    """A requirement met by any value but None (``--replay-from`` given)."""

    def __repr__(self) -> str:
        return "SET"


SET: Any = _Set()


@dataclass(frozen=True)
class Preset:
    """Settings that come with one choice (``prompt="plan"``, ``control="action"``...).

    Attributes:
        chosen_by: the dotted field whose value declares the preset (``"model"``).
        value: that value (``"oracle-frames"``).
        defaults: field -> value the run takes unless the user set that field; the command
            line applies them (a library caller sets what it wants).
        fixed: field -> value the run always plays with (the runner applies them).
        requires: field -> the value the run must have (``SET``: any but None).
        why: what the choice does, said when a requirement is not met; it follows
            ``{chosen_by} value`` and may name settings as ``{field}``.

    """

    chosen_by: str
    value: Any
    defaults: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    fixed: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    requires: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    why: str = ""

    def check(self, value_of: Callable[[str], Any]) -> None:
        """Refuse settings that break a requirement, naming the choice that has it.

        Args:
            value_of: a dotted field -> the run's value.

        Raises:
            ConfigError: on ``chosen_by``, saying what the choice needs.

        """
        for path, wanted in self.requires.items():
            value = value_of(path)
            if (value is None) if wanted is SET else value != wanted:
                need = (f"needs {{{path}}}" if wanted is SET else
                        f"needs {{{path}}} {'none' if wanted is None else wanted}")
                raise ConfigError(self.chosen_by, f"{self.value} {self.why or need}")
