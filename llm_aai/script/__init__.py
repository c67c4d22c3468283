"""The Think/Go/Turn script language: grammar -> typed commands -> frame actions.

``parse_script`` turns a model's reply into a ``Script`` (or raises ``ScriptError`` with
feedback for the model); ``Script.actions()`` gives one AAI action per environment step.
This package is only the language: playing scripts in an env under the paper's episode
protocol is ``llm_aai.protocol``.
"""

from llm_aai.script.errors import ScriptError
from llm_aai.script.model import (
    DEGREES_PER_STEP,
    NOOP,
    Action,
    Command,
    Go,
    Normalization,
    Script,
    Think,
    Turn,
    format_script,
)
from llm_aai.script.parser import DEFAULT_LIMITS, MODES, Mode, ScriptLimits, parse_script

__all__ = [
    "DEFAULT_LIMITS",
    "DEGREES_PER_STEP",
    "MODES",
    "NOOP",
    "Action",
    "Command",
    "Go",
    "Mode",
    "Normalization",
    "Script",
    "ScriptError",
    "ScriptLimits",
    "Think",
    "Turn",
    "format_script",
    "parse_script",
]
