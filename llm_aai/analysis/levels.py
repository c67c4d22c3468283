"""The ten Animal-AI testbed levels (the paper's cognitive categories)."""

from __future__ import annotations

LEVEL_NAMES: dict[int, str] = {
    1: "Food Retrieval",
    2: "Preferences",
    3: "Static Obstacles",
    4: "Avoidance",
    5: "Spatial Reasoning and Support",
    6: "Generalisation",
    7: "Internal Modelling",
    8: "Object Permanence and Working Memory",
    9: "Numerosity and Advanced Preferences",
    10: "Causal Reasoning",
}


def level_name(level: int) -> str:
    """Return the name of a level; a number outside 1-10 is a clear error."""
    try:
        return LEVEL_NAMES[int(level)]
    except KeyError:
        raise ValueError(f"level must be 1-10, got {level!r}") from None
