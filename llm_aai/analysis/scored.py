"""Which episodes say something about the model: every rate, comparison and probe counts these.

Two kinds of ending are left out everywhere and reported apart: an infrastructure failure (the
simulator or the provider broke, not the model), and a conversation that outgrew the server's
context window (``--context across-tasks``: what the model could not be sent says nothing
about it; ``analyze`` suggests ``--keep-last-turns``).
"""

from __future__ import annotations

import pandas as pd

from llm_aai.logs.schema import CONTEXT_OVERFLOW


def context_overflows(episodes: pd.DataFrame) -> pd.Series:
    """Per episode, whether its conversation outgrew the context window."""
    if "end_reason" not in episodes:
        return pd.Series(False, index=episodes.index)
    return episodes["end_reason"] == CONTEXT_OVERFLOW


def scored(episodes: pd.DataFrame) -> pd.DataFrame:
    """The episodes that count towards the model's rates (the module's docstring)."""
    return episodes[~episodes["infra_failure"] & ~context_overflows(episodes)]
