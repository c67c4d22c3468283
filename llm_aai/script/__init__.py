"""The Think/Go/Turn script language: grammar -> typed commands -> frame actions.

``parse_script`` turns a model's reply into a ``Script`` (or raises ``ScriptError`` with
feedback for the model); ``Script.actions()`` gives one AAI action per environment step;
``execute_script`` plays a script in a gymnasium-style env under the paper's protocol.
"""

from llm_aai.script.errors import ScriptError
from llm_aai.script.executor import (
    PAPER_PROTOCOL,
    InitialObservations,
    PaperProtocol,
    ScriptOutcome,
    execute_actions,
    execute_script,
    run_initial_observations,
)
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
from llm_aai.script.parser import DEFAULT_LIMITS, Mode, ScriptLimits, parse_script

__all__ = [
    "DEFAULT_LIMITS",
    "DEGREES_PER_STEP",
    "NOOP",
    "PAPER_PROTOCOL",
    "Action",
    "Command",
    "Go",
    "InitialObservations",
    "Mode",
    "Normalization",
    "PaperProtocol",
    "Script",
    "ScriptError",
    "ScriptLimits",
    "ScriptOutcome",
    "Think",
    "Turn",
    "execute_actions",
    "execute_script",
    "format_script",
    "parse_script",
    "run_initial_observations",
]
