"""Which reward events a turn's log keeps, in one place for the runner, replay and playback.

The env reports reward events in each step's ``info["events"]`` (``RewardEvent`` objects from
the embedded simulator, or dicts). The log keeps goals and zones; the per-step time decay
happens on every step and is already in the turn's ``reward``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

UNLOGGED_EVENTS = frozenset({"decay"})
"""Event kinds the log leaves out: time decay happens on every step and is in ``reward``."""


def logged_events(infos: Iterable[Mapping[str, Any]]) -> tuple[dict[str, Any], ...]:
    """The events of these steps' infos that the log keeps, as ``{kind, reward, step}`` dicts."""
    events = []
    for info in infos:
        for event in info.get("events", ()):
            if not isinstance(event, Mapping):
                event = {"kind": event.kind, "reward": event.reward, "step": event.step}
            if event["kind"] not in UNLOGGED_EVENTS:
                events.append(event)
    return tuple(events)
