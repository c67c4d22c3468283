"""The timings of a goal whose value changes, one entry per instance in each list.

The lists are ``initialValues``, ``finalValues``, ``changeRates`` and ``delays``
(docs/animal-ai-facts.md §4).

Unity reads them for every instance, filling a missing entry with a default that depends on
the object's name (``ArenaBuilders.cs``), so the defaults live here, next to the reading, and
the placer hands each placed goal its own ``GoalTimings``.
"""

from __future__ import annotations

from dataclasses import dataclass

from llm_aai.arena.model import Item

TIMING_KEYS = ("initialValues", "finalValues", "changeRates", "delays")
"""The item keys a changing goal reads, in Unity's order."""
DEFAULT_RATE = -0.005
DEFAULT_DELAY = 0.0


@dataclass(frozen=True)
class GoalTimings:
    """One instance's timings as written (or defaulted), before the goal's own rules apply.

    Attributes:
        initial / final: the value (or size) it starts at and moves to.
        rate: change per physics step, sign as written (the goal's rule corrects it).
        delay: physics steps before the change starts.
    """

    initial: float
    final: float
    rate: float
    delay: float


def default_values(name: str) -> tuple[float, float]:
    """Unity's initial and final value for a missing entry, from the resolved object name.

    ``ArenaBuilders.cs`` gives 0.5 -> 2.5 to a name that starts with Grow or Anti or holds
    Tree, 2.5 -> 0.5 to any other; AntiDecayGoal is already RipenGoal by then, so it decays.
    """
    if name.startswith(("Anti", "Grow")) or "Tree" in name:
        return (0.2, 1.0) if "Tree" in name else (0.5, 2.5)
    return 2.5, 0.5


def numbers(item: Item, key: str) -> tuple[float, ...]:
    """The entries of ``key`` in ``item.extra`` as floats (an empty tuple when missing).

    Raises:
        ValueError: the value is not a list of numbers (the validator names file and line).
    """
    value = dict(item.extra).get(key, ())
    if not isinstance(value, tuple):
        value = (value,)
    try:
        return tuple(float(v) for v in value)
    except (TypeError, ValueError):
        raise ValueError(f"{key} must be a list of numbers, got {list(value)!r}") from None


def timings_of(item: Item, instance: int, name: str) -> GoalTimings:
    """Instance ``instance``'s timings, Unity's defaults where the lists stop short."""
    initial, final = default_values(name)
    defaults = (initial, final, DEFAULT_RATE, DEFAULT_DELAY)
    values = []
    for key, default in zip(TIMING_KEYS, defaults, strict=True):
        entries = numbers(item, key)
        values.append(entries[instance] if instance < len(entries) else default)
    return GoalTimings(*values)
