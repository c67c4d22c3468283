"""Variants made on demand and cached: what ``run --variants K --variant-seed S`` plays.

Each task's variants are cached on their own, in ``<root>/tasks/<task>-<key>/`` (a ``make``
folder of that one task), where the key is the sha256 of what decides them: the task file's
sha256, K, the seed, the validation settings and ``GENERATOR_VERSION``. A run over other
tasks, or a later run over the same ones, reuses every task cached already and makes only the
missing ones, in one ``make`` into ``<root>/batches/`` (resumable like any ``make``: an
interrupted run's next invocation picks it up). The tasks a run asks for are then gathered
into ``<root>/sets/<key>/``, an ordinary variants folder as ``run --variants DIR`` reads, so
the run records the variant ids and parents as it does for a folder made by hand.

A cache entry, a batch's split and a set are each written into a temporary folder and
renamed into place, so a kill leaves either a whole entry or none.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from llm_aai.arena.catalog import Task, resolve_arena_path
from llm_aai.variants.generate import (
    GENERATOR_VERSION,
    PROGRESS_FILE,
    MakeSettings,
    TaskOutcome,
    file_sha256,
    make_variants,
)
from llm_aai.variants.index import INDEX_FILE, KEPT, read_rows, write_rows
from llm_aai.variants.validation import ValidationSettings

SET_FILE = "variants-set.json"
"""In a gathered set: K, the seed, the generator version and each task's cache entry."""


def default_cache_root() -> Path:
    """``$XDG_CACHE_HOME/llm-aai/variants`` (``~/.cache`` when the variable is unset)."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "llm-aai" / "variants"


@dataclass(frozen=True)
class CachedSet:
    """The variants folder a run plays and how it came about.

    Attributes:
        folder: the gathered variants folder (``run --variants DIR`` reads it).
        reused: tasks whose variants came from the cache.
        made: tasks whose variants were made now.
    """

    folder: Path
    reused: tuple[str, ...]
    made: tuple[str, ...]


def task_key(file_digest: str, settings: MakeSettings) -> str:
    """The cache key of one task's variants: everything that decides them."""
    decided_by = {"task_sha256": file_digest, "count": settings.count, "seed": settings.seed,
                  "candidates": settings.allowance, "generator_version": GENERATOR_VERSION,
                  "validation": dataclasses.asdict(settings.validation)}
    text = json.dumps(decided_by, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def cached_variants(tasks: list[Task], count: int, seed: int, *,
                    validation: ValidationSettings | None = None,
                    arenas_dir: str | Path | None = None, root: Path | None = None,
                    workers: int = 1,
                    on_task: Callable[[TaskOutcome], None] | None = None) -> CachedSet:
    """K validated variants of each task, from the cache or made now and cached.

    Args:
        tasks: the parent tasks.
        count: K, variants per task.
        seed: the generation seed.
        validation: the checks (the defaults of ``ValidationSettings`` if None).
        arenas_dir: where the testbed files are.
        root: the cache folder (``default_cache_root()`` if None).
        workers: worker processes for the tasks not cached.
        on_task: called with each task's outcome as it is made (not for cached ones).

    Returns:
        The gathered folder, and which tasks were reused or made.

    Raises:
        VariantRequestError: K out of range, or no task can be transformed.
        ArenaNotFoundError: a task's file is missing.
    """
    settings = MakeSettings(count=count, seed=seed,
                            validation=validation or ValidationSettings())
    root = Path(root) if root is not None else default_cache_root()
    tasks = sorted(set(tasks))
    paths = {t.task_id: resolve_arena_path(t.task_id, arenas_dir) for t in tasks}
    entries = {t.task_id: root / "tasks" / f"{t.task_id}-"
               f"{task_key(file_sha256(paths[t.task_id]), settings)}" for t in tasks}
    missing = [t for t in tasks if not (entries[t.task_id] / INDEX_FILE).is_file()]
    if missing:
        batch = root / "batches" / _digest(sorted(entries[t.task_id].name for t in missing))
        make_variants(missing, batch, settings, arenas_dir=arenas_dir, workers=workers,
                      on_task=on_task)
        _split(batch, {t.task_id: entries[t.task_id] for t in missing})
        shutil.rmtree(batch)
    folder = _gather(root, tasks, entries, settings)
    made = {t.task_id for t in missing}
    return CachedSet(folder, tuple(t.task_id for t in tasks if t.task_id not in made),
                     tuple(t.task_id for t in missing))


def _digest(names: list[str]) -> str:
    return hashlib.sha256("\n".join(names).encode()).hexdigest()[:20]


def _split(batch: Path, entries: dict[str, Path]) -> None:
    """Give each task of a finished batch its own cache entry (rows, files, request)."""
    rows = read_rows(batch)
    progress = json.loads((batch / PROGRESS_FILE).read_text(encoding="utf-8"))
    for task_id, entry in entries.items():
        if (entry / INDEX_FILE).is_file():
            continue
        mine = [row for row in rows if row["parent"] == task_id]
        request = {**progress["request"],
                   "tasks": {task_id: progress["request"]["tasks"][task_id]}}
        _publish(entry, batch, mine, {
            "request": request,
            "not_applied": {task_id: progress["not_applied"].get(task_id, {})}},
            PROGRESS_FILE)


def _gather(root: Path, tasks: list[Task], entries: dict[str, Path],
            settings: MakeSettings) -> Path:
    """The set of these tasks' entries as one variants folder (made once, then reused)."""
    names = [entries[t.task_id].name for t in tasks]
    folder = root / "sets" / _digest(names)
    if (folder / INDEX_FILE).is_file():
        return folder
    rows = [row for t in tasks for row in read_rows(entries[t.task_id])]
    record = {"count": settings.count, "seed": settings.seed,
              "generator_version": GENERATOR_VERSION,
              "validation": dataclasses.asdict(settings.validation),
              "entries": {t.task_id: str(entries[t.task_id]) for t in tasks}}
    _publish(folder, None, rows, record, SET_FILE, sources=entries)
    return folder


def _publish(folder: Path, source: Path | None, rows: list[dict], record: dict, record_name: str,
             sources: dict[str, Path] | None = None) -> None:
    """Write rows, their kept files and a record into ``folder`` at once (temp + rename)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    draft = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    try:
        for row in rows:
            if row["outcome"] == KEPT:
                where = source if source is not None else sources[row["parent"]]
                shutil.copyfile(where / row["file"], draft / row["file"])
        (draft / record_name).write_text(json.dumps(record, indent=1, sort_keys=True) + "\n",
                                         encoding="utf-8")
        write_rows(draft, rows)
        try:
            os.replace(draft, folder)
        except OSError:  # made meanwhile by another run: that one is as good
            if not (folder / INDEX_FILE).is_file():
                raise
    finally:
        shutil.rmtree(draft, ignore_errors=True)
