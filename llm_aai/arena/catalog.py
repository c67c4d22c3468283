"""The official Animal-AI testbed as a catalog: task ids, levels, selection, and where files live.

The 900 arena files themselves are not shipped (see ``llm_aai.arena.fetch``); the package
carries only facts about them: the pinned commit, each file's sha256, and the 40-task subset
that children played and the LLM-AAI paper used. Commands find a task's file in one place,
chosen in this order (the first one configured wins, so a typo in ``--arenas-dir`` is an
error rather than a silent switch to another copy):

1. the ``arenas_dir`` argument (the CLIs' ``--arenas-dir``);
2. the ``LLM_AAI_ARENAS`` environment variable;
3. the user cache (``~/.cache/llm-aai/testbed/<commit>/`` on Linux), which
   ``python -m llm_aai.arenas fetch`` fills, and which is filled on first use: a task missing
   there makes the whole pinned testbed download once (``llm_aai.arena.fetch``, from the
   official source or the mirror named by ``$LLM_AAI_TESTBED_SOURCE``). A folder given by
   the first two is an offline copy and never downloaded into.
"""

from __future__ import annotations

import csv
import os
import re
import sys
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from llm_aai.arena.checksum import pinned_checksums
from llm_aai.arena.fetch import (
    ARENAS_ENV,
    BASE_URL,
    SOURCE_ENV,
    TESTBED_COMMIT,
    TESTBED_REPO,
    FetchError,
    cache_dir,
    default_source,
    fetch_testbed,
)

__all__ = [  # the testbed's facts, with where its files come from (arena.fetch)
    "ARENAS_ENV", "BASE_URL", "LEVEL_NAMES", "SOURCE_ENV", "TESTBED_COMMIT", "TESTBED_REPO",
    "ArenaNotFoundError", "PassMark", "Task", "TaskSelectionError", "UnityRecord",
    "all_tasks", "arenas_location", "cache_dir", "checksums", "children_subset",
    "pass_mark_of", "resolve_arena_path", "select_tasks", "unity_passed_tasks",
    "unity_records",
]


LEVEL_NAMES = {
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

_TASK_ID = re.compile(r"(\d\d)-(\d\d)-(\d\d)")


class TaskSelectionError(ValueError):
    """A ``--level`` / ``--tasks`` selection that names nothing valid."""


class ArenaNotFoundError(FileNotFoundError):
    """A task's arena file is not where the configuration says to look."""

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True, order=True)
class Task:
    """One testbed arena: id ``LL-TT-VV`` (level, test, variant) and its level."""

    task_id: str
    level: int
    level_name: str

    @property
    def filename(self) -> str:
        """The arena's file name in the testbed folder."""
        return f"{self.task_id}.yaml"


def _data(name: str) -> str:
    return resources.files("llm_aai").joinpath("data", name).read_text(encoding="utf-8")


def checksums() -> dict[str, str]:
    """Map each testbed file name to its sha256 (hex) at the pinned commit."""
    return pinned_checksums()


def _task(task_id: str) -> Task:
    level = int(task_id[:2])
    return Task(task_id, level, LEVEL_NAMES[level])


@cache
def all_tasks() -> tuple[Task, ...]:
    """Return all 900 testbed tasks, in id order."""
    return tuple(sorted(_task(name.removesuffix(".yaml")) for name in checksums()))


@cache
def children_subset() -> tuple[Task, ...]:
    """Return the 40 tasks (4 per level) that children played and the LLM-AAI paper used."""
    rows = csv.DictReader(_data("children_subset.csv").splitlines())
    return tuple(sorted(Task(r["task_id"], int(r["level"]), r["level_name"]) for r in rows))


@dataclass(frozen=True)
class UnityRecord:
    """What the Animal-AI Olympics 2019 entrants did on one testbed task (package data).

    Attributes:
        task_id: the task.
        pass_mark: the competition's pass mark (behind every Olympics and children figure).
        entrants: entrants scored on it (60).
        passed_any: how many of them passed it in the Unity build.
        top10_passed: how many of the top 10 entrants passed it.
    """

    task_id: str
    pass_mark: float
    entrants: int
    passed_any: int
    top10_passed: int


@cache
def unity_records() -> dict[str, UnityRecord]:
    """Per testbed task, the competition's pass mark and how many entrants passed it.

    From ``llm_aai/data/olympics_task_passes.csv``; its source is in the ``.md`` beside it.
    """
    rows = csv.DictReader(_data("olympics_task_passes.csv").splitlines())
    return {r["task_id"]: UnityRecord(r["task_id"], float(r["pass_mark"]), int(r["entrants"]),
                                      int(r["passed_any"]), int(r["top10_passed"]))
            for r in rows}


def unity_passed_tasks() -> tuple[Task, ...]:
    """The 736 testbed tasks an Olympics entrant passed in the Unity build, in id order.

    The yardstick of the audit and of the variants' coverage.
    """
    records = unity_records()
    return tuple(t for t in all_tasks() if records[t.task_id].passed_any)


@dataclass(frozen=True)
class PassMark:
    """The pass mark an episode is held to, and where it came from.

    Attributes:
        value: the mark used.
        file_value: the arena file's own ``pass_mark``.
        source: ``"competition"`` (a testbed task: the competition's mark) or ``"file"``.
    """

    value: float
    file_value: float
    source: str

    @property
    def note(self) -> str | None:
        """A sentence when the mark used differs from the file's, else None."""
        if self.value == self.file_value:
            return None
        return (f"pass mark {self.value:g} (the competition's) instead of the arena file's "
                f"{self.file_value:g}; see llm_aai/data/olympics_task_passes.md")


def pass_mark_of(task_id: str | None, file_value: float) -> PassMark:
    """The pass mark to use for a task: the competition's for a testbed task id, else the file's.

    The testbed files disagree with the competition for 07-13-01/02/03 (4 instead of 1) and
    10-22-02 (none instead of 0); the competition's is the one every Olympics and children
    figure was computed with, so comparisons need it.
    """
    record = unity_records().get(task_id) if task_id else None
    if record is None:
        return PassMark(float(file_value), float(file_value), "file")
    return PassMark(record.pass_mark, float(file_value), "competition")


def _parse_levels(spec: str) -> set[int]:
    levels: set[int] = set()
    for part in (p.strip() for p in spec.split(",")):
        match = re.fullmatch(r"(\d+)(?:\s*-\s*(\d+))?", part)
        if not match:
            raise TaskSelectionError(f"bad level {part!r} in {spec!r}: use e.g. 3, 1-10 or 1,3,5")
        low = int(match.group(1))
        high = int(match.group(2) or low)
        if low > high:
            raise TaskSelectionError(f"level range {part!r} is reversed: write {high}-{low}")
        if low not in LEVEL_NAMES or high not in LEVEL_NAMES:
            raise TaskSelectionError(f"level {part!r} is out of range: levels are 1 to 10")
        levels.update(range(low, high + 1))
    return levels


def _parse_ids(spec: str, pool: tuple[Task, ...]) -> list[Task]:
    by_id = {t.task_id: t for t in pool}
    known = {t.task_id for t in all_tasks()}
    chosen = []
    for raw in (p.strip() for p in spec.split(",")):
        task_id = raw.removesuffix(".yaml")
        if not _TASK_ID.fullmatch(task_id):
            raise TaskSelectionError(f"bad task id {raw!r}: ids look like 04-12-03 "
                                     "(level-test-variant)")
        if task_id not in known:
            raise TaskSelectionError(f"task {task_id} is not in the testbed (levels 01-10, "
                                     "tests 01-30, variants 01-03)")
        if task_id not in by_id:
            raise TaskSelectionError(f"task {task_id} is not in the 40-task children subset; "
                                     "add --full-testbed to choose from the whole testbed")
        chosen.append(by_id[task_id])
    return chosen


def select_tasks(level: str | None = None, tasks: str | None = None,
                 full: bool = False) -> list[Task]:
    """Resolve a ``--level`` / ``--tasks`` selection to tasks, in id order.

    Args:
        level: ``"3"``, ``"1-10"``, ``"1,3,5"`` or a mix (``"1-3,7"``); None for all levels.
        tasks: comma-separated ids (``"01-04-03,02-12-01"``); None for all tasks.
        full: choose from all 900 tasks instead of the 40-task children subset.

    Returns:
        The matching tasks without duplicates; both filters apply when both are given.

    Raises:
        TaskSelectionError: a malformed or unknown level or id, or an empty selection.

    """
    pool = all_tasks() if full else children_subset()
    chosen = set(_parse_ids(tasks, pool)) if tasks else set(pool)
    if level:
        levels = _parse_levels(level)
        chosen = {t for t in chosen if t.level in levels}
    if not chosen:
        raise TaskSelectionError(f"no task matches level={level!r} tasks={tasks!r}")
    return sorted(chosen)


CACHE = "the testbed cache"


def arenas_location(arenas_dir: str | Path | None = None) -> tuple[Path, str]:
    """Return the folder to read testbed files from and how it was chosen."""
    if arenas_dir is not None:
        return Path(arenas_dir).expanduser(), "--arenas-dir"
    if os.environ.get(ARENAS_ENV):
        return Path(os.environ[ARENAS_ENV]).expanduser(), f"${ARENAS_ENV}"
    return cache_dir(), CACHE


def resolve_arena_path(task_id: str, arenas_dir: str | Path | None = None) -> Path:
    """Find the arena file of a testbed task, downloading the testbed on first use.

    Args:
        task_id: an id such as ``"04-12-03"``.
        arenas_dir: a folder of testbed files; overrides ``LLM_AAI_ARENAS`` and the cache.

    Raises:
        TaskSelectionError: the id is malformed or not in the testbed.
        ArenaNotFoundError: the file is missing from the folder given, or from the cache and
            the download failed; the message says why and how to get it.

    """
    task = _parse_ids(task_id, all_tasks())[0]
    folder, how = arenas_location(arenas_dir)
    path = folder / task.filename
    if path.is_file():
        return path
    if how == CACHE:
        _fill_cache(task, folder)
        return path
    raise ArenaNotFoundError(
        f"arena {task.task_id} not found: {path} does not exist (folder from {how}). "
        "Fill that folder with `python -m llm_aai.arenas fetch --dest DIR`, or leave out "
        f"--arenas-dir and {ARENAS_ENV} to use the testbed cache (downloaded on first use).")


def _fill_cache(task: Task, folder: Path) -> None:
    """Download the pinned testbed into the cache, saying so (the first use on this machine).

    All 900 files (about 1.4 MB) at once rather than the task asked for: every later command,
    on any task, then works offline.
    """
    source = default_source()
    print(f"arena {task.task_id} is not in the testbed cache {folder}: downloading the pinned "
          f"testbed once (900 files, 1.4 MB, checksummed) from {source}"
          + ("" if os.environ.get(SOURCE_ENV) else f" (a mirror: {SOURCE_ENV}=URL)"),
          file=sys.stderr, flush=True)
    try:
        fetch_testbed(folder, source=source)
    except FetchError as error:
        raise ArenaNotFoundError(f"arena {task.task_id} is not in the testbed cache {folder} "
                                 f"and downloading it failed: {str(error).splitlines()[0]}"
                                 ) from None
