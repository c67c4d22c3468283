"""The ten Animal-AI testbed levels (the paper's cognitive categories)."""

from __future__ import annotations

# One list of level names for the whole project: the testbed catalog's.
from llm_aai.arena.catalog import LEVEL_NAMES


def level_name(level: int) -> str:
    """Return the name of a level; a number outside 1-10 is a clear error."""
    try:
        return LEVEL_NAMES[int(level)]
    except KeyError:
        raise ValueError(f"level must be 1-10, got {level!r}") from None
