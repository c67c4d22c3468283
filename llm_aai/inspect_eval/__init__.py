"""The testbed as an Inspect task: ``inspect eval llm_aai/testbed --model PROVIDER/MODEL``.

Inspect (UK AISI's evaluation framework) is an optional extra (``pip install
'llm-aai[inspect]'``); nothing here imports it until a task is built. Each sample is one
testbed task, each epoch one trial: the solver plays it with the runner's ``EpisodeRunner``
(the protocol's ``Episode`` and the runner's prompts and feedback) and Inspect's model, and
writes it in the project's own log schema as well (docs/inspect.md).
"""

from __future__ import annotations

import importlib


def require_inspect() -> None:
    """Import ``inspect_ai`` or say how to install it.

    Raises:
        ImportError: the ``inspect`` extra is not installed (the message gives the command).

    """
    try:
        importlib.import_module("inspect_ai")
    except ImportError as error:
        raise ImportError("the Inspect task needs inspect-ai: pip install 'llm-aai[inspect]'"
                          ) from error
