"""Partial credit by the way: how much nearer the nearest goal the agent ended than it started.

The share of the pass mark's reward (``llm_aai.analysis.paired.progress``) gives nothing to an
agent that walked most of the way to a ball and stopped short. This measure does: the walking
distance to the nearest good goal still in play, along the oracle's walking map
(``llm_aai.oracle.navigation.NavMap``: ramps climbed, walls walked round, death zones kept
off), when the episode started and when it ended. ``nearer`` is the share of the start's
distance that was closed, ``(start - end) / start`` clipped to [0, 1], and 1 for a pass.

Both instants come from re-simulating the logged episode (``llm_aai.replay.resimulate``), not
from anything stored: the start is the first initial observation, the end is the state after
the last logged turn. An episode whose nearest goal cannot be walked to at the start (a ball on
a platform reached only by pushing a block) has no such measure (``nearer`` empty), passed or
not, and an
agent that ends where no goal can be walked to has closed none of the way (0).
"""

from __future__ import annotations

import csv
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llm_aai.oracle.navigation import UNREACHABLE, NavMap, agent_pose, live_goals
from llm_aai.replay import (
    ArenaMissingError,
    LoggedEpisode,
    ReplayInputError,
    load_episode,
    resimulate,
)

NEARNESS_CSV = "nearness.csv"
COLUMNS: tuple[str, ...] = ("episode", "task", "level", "agent", "passed", "start_m", "end_m",
                            "nearer")


class NearnessError(ValueError):
    """An episode could not be measured: unfinished, or it did not re-simulate to a MATCH."""


def goal_distance(backend: Any) -> float:
    """Walking distance (m) from the agent to the nearest good goal in play, inf if none.

    Args:
        backend: the embedded backend (its simulator is read, never stepped).

    Raises:
        TypeError: the backend has no embedded simulator.
    """
    sim = getattr(backend, "_sim", None)
    if sim is None:
        raise TypeError(f"{type(backend).__name__} has no embedded simulator: the walking "
                        "map needs it")
    nav = NavMap(sim)
    good, _ = live_goals(sim)
    x, _, z, _ = agent_pose(sim)
    return min((nav.distance(nav.field(goal), x, z) for goal in good), default=UNREACHABLE)


def nearer(start_m: float, end_m: float, passed: bool) -> float:
    """The share of the way to the nearest goal closed: 1 for a pass, NaN if none to close.

    An episode whose goals cannot be walked to at the start has no measure even when passed
    (its goal was had by pushing, climbing or leaping off the map): counting its passes but
    not its failures would favour whichever agent passes such tasks.

    Args:
        start_m: walking distance at the start.
        end_m: walking distance at the end (inf: no goal can be walked to from there).
        passed: whether the episode passed.
    """
    if not math.isfinite(start_m) or start_m <= 0:
        return math.nan
    if passed:
        return 1.0
    if not math.isfinite(end_m):
        return 0.0
    return min(max((start_m - end_m) / start_m, 0.0), 1.0)


@dataclass(frozen=True)
class Nearness:
    """One episode's distances and the share closed."""

    episode: str
    task: str
    level: int
    agent: str
    passed: bool
    start_m: float
    end_m: float

    @property
    def nearer(self) -> float:
        """See ``nearer``."""
        return nearer(self.start_m, self.end_m, self.passed)

    def row(self) -> dict[str, str]:
        """The CSV row; an unknown share is empty."""
        share = self.nearer
        return {"episode": self.episode, "task": self.task, "level": str(self.level),
                "agent": self.agent, "passed": str(self.passed).lower(),
                "start_m": f"{self.start_m:.3f}", "end_m": f"{self.end_m:.3f}",
                "nearer": "" if math.isnan(share) else f"{share:.4f}"}


class _FirstCall:
    """A probe that measures only on its first call: the episode's first observation."""

    def __init__(self, measure: Callable[[Any], float]) -> None:
        self._measure = measure
        self.value: float | None = None

    def __call__(self, backend: Any) -> None:
        if self.value is None:
            self.value = self._measure(backend)


def measure_episode(episode: LoggedEpisode, *,
                    arenas_dir: str | Path | None = None) -> Nearness:
    """Re-simulate one sealed episode and measure the way to the nearest goal at both ends.

    Raises:
        NearnessError: the episode is unfinished or does not re-simulate to a MATCH.
        ArenaMissingError: its arena file is nowhere to be found (the places named).
    """
    result = episode.result
    if result is None:
        raise NearnessError(f"{episode.directory}: unfinished episode (no result.json)")
    start = _FirstCall(goal_distance)
    try:
        report = resimulate(episode, arenas_dir=arenas_dir, probe=start,
                            final_probe=goal_distance)
    except ArenaMissingError:
        raise
    except ReplayInputError as error:
        raise NearnessError(str(error)) from error
    if not report.ok:
        raise NearnessError(f"{episode.directory}: {report.verdict()}")
    if start.value is None:
        raise NearnessError(f"{episode.directory}: no observation was re-simulated")
    return Nearness(episode.episode_id, result.task_id, result.level, result.agent,
                    bool(result.passed), start.value, report.final)


def measure_run(run_dir: str | Path, *, arenas_dir: str | Path | None = None,
                on_error: Callable[[str], None] | None = None) -> list[Nearness]:
    """Measure every sealed episode of a run and write ``RUN_DIR/nearness.csv``.

    Args:
        run_dir: the run directory.
        arenas_dir: where to find the arenas (see ``llm_aai.replay.verified_arena``).
        on_error: told each episode that could not be measured (left out); None raises.

    Raises:
        NearnessError: not a run directory, an arena file not found (at the first episode
            that needs it, whatever ``on_error``: nothing is written), or (without
            ``on_error``) an episode fails.
    """
    run = Path(run_dir)
    if not (run / "manifest.json").is_file():
        raise NearnessError(f"{run}: not a run directory (no manifest.json)")
    measured = []
    for directory in sorted(p.parent for p in (run / "episodes").glob("*/result.json")):
        try:
            measured.append(measure_episode(load_episode(directory), arenas_dir=arenas_dir))
        except ArenaMissingError as error:  # the next episodes would look in the same places
            raise NearnessError(f"{error} (nothing measured or written)") from error
        except (NearnessError, ReplayInputError) as error:
            if on_error is None:
                raise NearnessError(str(error)) from error
            on_error(str(error))
    partial = run / (NEARNESS_CSV + ".partial")
    with partial.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(COLUMNS))
        writer.writeheader()
        writer.writerows(m.row() for m in measured)
    partial.replace(run / NEARNESS_CSV)
    return measured


def read_nearness(run_dir: str | Path) -> dict[str, float]:
    """``RUN_DIR/nearness.csv`` as episode id -> share closed (NaN where unknown).

    Raises:
        NearnessError: the file is missing, lacks a column, or holds a bad number (named with
            its line).
    """
    path = Path(run_dir) / NEARNESS_CSV
    if not path.is_file():
        raise NearnessError(f"{path}: not found (run `python -m llm_aai.grounding RUN_DIR "
                            "--nearness`)")
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in ("episode", "nearer") if c not in (reader.fieldnames or ())]
        if missing:
            raise NearnessError(f"{path}:1: missing column(s) {', '.join(missing)}")
        shares = {}
        for number, row in enumerate(reader, start=2):
            try:
                shares[row["episode"]] = float(row["nearer"]) if row["nearer"] else math.nan
            except ValueError:
                raise NearnessError(f"{path}:{number}: nearer {row['nearer']!r} is not a "
                                    "number") from None
    return shares
