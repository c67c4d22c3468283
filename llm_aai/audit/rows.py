"""One row of ``audit.csv`` as a typed record, and its CSV round trip.

A row is one oracle episode (a task, a seed, a build). Empty cells are ``None`` here: a
crashed episode has no reward, a task no Olympics entrant record has no Unity counts, a task
outside the children's 40 has no children rate. ``to_csv`` writes what the audit always
wrote (``str`` of each value, an empty cell for None), so files written before and after the
record type existed read and compare the same.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any


class AuditRowError(ValueError):
    """A cell of ``audit.csv`` that does not read as its column's type."""


def _flag(text: str) -> bool:
    if text not in ("True", "False"):
        raise ValueError(f"expected True or False, got {text!r}")
    return text == "True"


@dataclass(frozen=True)
class AuditRow:
    """One audited episode (``audit.csv``'s columns, in order).

    Attributes:
        task_id: the testbed task.
        level: its level (1-10).
        seed: the episode's seed (1..seeds).
        solved: reward >= pass_mark (False for a crash).
        reward: the episode's return; None if it crashed.
        pass_mark: the competition's pass mark it was held to; None if it crashed first.
        file_pass_mark: the pass mark in the arena file.
        steps: AAI steps the episode took.
        scripts: scripts sent (per-action mode: plans made).
        searched: simulated AAI steps of the search.
        search_seconds: CPU seconds of the episode.
        end_reason: how the episode ended ("" for a crash).
        status: ``ok``, or ``crash: ...`` with why.
        unity_passed: Olympics entrants who passed it in Unity (None: no record).
        unity_entrants: entrants on record.
        unity_top10: of the top ten entrants, those who passed it.
        children_rate: the children's pass rate (None outside the 40 tasks).
        physics_build: the Animal-AI build it was played in.
        node_id: the node it ran on (Ray's node id, ``local`` off a cluster; empty in rows
            of audits written before it was recorded, and for a crash).
        host: the machine it ran on (empty likewise).
    """

    task_id: str
    level: int
    seed: int
    solved: bool
    reward: float | None = None
    pass_mark: float | None = None
    file_pass_mark: float | None = None
    steps: int | None = None
    scripts: int | None = None
    searched: int | None = None
    search_seconds: float | None = None
    end_reason: str = ""
    status: str = "ok"
    unity_passed: int | None = None
    unity_entrants: int | None = None
    unity_top10: int | None = None
    children_rate: float | None = None
    physics_build: str = ""
    node_id: str = ""
    host: str = ""

    @property
    def ok(self) -> bool:
        """The episode was played to its end (no crash)."""
        return self.status == "ok"

    def to_csv(self) -> dict[str, str]:
        """The row as ``audit.csv`` cells."""
        return {name: "" if value is None else str(value)
                for name, value in dataclasses.asdict(self).items()}

    @classmethod
    def from_csv(cls, cells: Mapping[str, str], where: str = "audit.csv") -> AuditRow:
        """Read a row's cells (``csv.DictReader``'s dict); a missing column reads as empty.

        Raises:
            AuditRowError: a cell that does not read as its type (naming ``where`` and the
                column).
        """
        values: dict[str, Any] = {}
        for field in dataclasses.fields(cls):
            text = cells.get(field.name) or ""
            read = _READERS[field.name]
            try:
                values[field.name] = read(text) if text != "" else _EMPTY[field.name]
            except ValueError as error:
                raise AuditRowError(f"{where}: column {field.name}: {error}") from None
        return cls(**values)


COLUMNS = tuple(field.name for field in dataclasses.fields(AuditRow))
"""``audit.csv``'s header."""

_READERS: dict[str, Callable[[str], Any]] = {
    "task_id": str, "level": int, "seed": int, "solved": _flag, "reward": float,
    "pass_mark": float, "file_pass_mark": float, "steps": int, "scripts": int,
    "searched": int, "search_seconds": float, "end_reason": str, "status": str,
    "unity_passed": int, "unity_entrants": int, "unity_top10": int, "children_rate": float,
    "physics_build": str, "node_id": str, "host": str,
}
_EMPTY: dict[str, Any] = {name: "" if reader is str else None
                          for name, reader in _READERS.items()}
_EMPTY["solved"] = False
