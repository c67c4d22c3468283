"""``variants.csv``: the sidecar index of a variants folder, one row per candidate considered.

Kept variants have a ``variant_id`` (``<task>-v<k>``) and a file ``<task>-v<k>.yaml`` beside
the index; rejected candidates (and parents that yield none) are rows too, with the reason, so
nothing generated is dropped without a trace. ``run --variants DIR`` plays the kept rows.
"""

from __future__ import annotations

import csv
import os
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from llm_aai.arena.catalog import LEVEL_NAMES, Task, select_tasks
from llm_aai.sim.builds import PHYSICS_BUILDS

INDEX_FILE = "variants.csv"
PLACEMENT_COLUMNS = ("node_id", "host")
"""Where a task's variants were made: the Ray node id (``local`` off a cluster) and the host."""
UNPLACED_COLUMNS = ("variant_id", "parent", "level", "outcome", "reason", "detail",
                    "transformations", "seed", "pass_mark", "physics_build", "oracle_rewards",
                    "heuristic_parent", "heuristic_variant", "placed_sha256", "file")
"""The header before rows recorded where they were made (their placement reads empty)."""
COLUMNS = (*UNPLACED_COLUMNS, *PLACEMENT_COLUMNS)
LEGACY_COLUMNS = tuple(c for c in UNPLACED_COLUMNS if c != "physics_build")
"""The header before variants recorded their build (generator versions 1 and 2): every
variant then was checked in the 3.x build, which ``read_rows`` fills in."""
KEPT = "kept"
REJECTED = "rejected"
_VARIANT_ID = re.compile(r"^\d\d-\d\d-\d\d-v\d+$")


class VariantIndexError(ValueError):
    """A variants folder without a readable index, or an index naming a missing file."""


@dataclass(frozen=True)
class Variant:
    """One kept variant, as ``run --variants`` plays it.

    Attributes:
        variant_id: ``<task>-v<k>``.
        parent: the testbed task it was made from.
        level: the parent's level.
        transformations: what was applied, in order (``;``-separated in the CSV).
        path: its arena file.
        physics_build: the Animal-AI build it was validated in (its parent's: the first
            build whose oracle solves the parent).
    """

    variant_id: str
    parent: str
    level: int
    transformations: str
    path: Path
    physics_build: str = PHYSICS_BUILDS[0]


def write_rows(out: Path, rows: list[dict]) -> None:
    """Write ``out/variants.csv`` whole, atomically (a temporary file renamed over it).

    A ``make`` killed at any moment leaves either the index before or the index after a
    task's rows, never half a row: that is what lets a rerun resume from it.
    """
    path = Path(out) / INDEX_FILE
    draft = path.with_name(f".{INDEX_FILE}.tmp")
    with draft.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(draft, path)


def read_rows(folder: Path) -> list[dict]:
    """Every row of ``folder/variants.csv``.

    A folder written before variants recorded their build (``LEGACY_COLUMNS``) reads with
    ``physics_build`` 3.x on its rows that have a seed (all of them were checked there); one
    written before rows recorded where they were made reads with that placement empty.

    Raises:
        VariantIndexError: there is no index, or its header is not ``COLUMNS``.
    """
    path = Path(folder) / INDEX_FILE
    if not path.is_file():
        raise VariantIndexError(f"{folder}: no {INDEX_FILE} (make one with python -m "
                                "llm_aai.variants make TASK... --out DIR)")
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        header = tuple(reader.fieldnames or ())
        unplaced = dict.fromkeys(PLACEMENT_COLUMNS, "")
        if header == LEGACY_COLUMNS:
            return [{**row, "physics_build": PHYSICS_BUILDS[0] if row["seed"] else "",
                     **unplaced} for row in reader]
        if header == UNPLACED_COLUMNS:
            return [{**row, **unplaced} for row in reader]
        if header != COLUMNS:
            raise VariantIndexError(f"{path}:1: header {reader.fieldnames} is not "
                                    f"{list(COLUMNS)}")
        return list(reader)


def read_variants(folder: Path) -> list[Variant]:
    """The kept variants of a folder, in index order, each checked to exist.

    Raises:
        VariantIndexError: no index, a malformed row, or a kept variant's file is missing.
    """
    folder = Path(folder)
    variants = []
    for line, row in enumerate(read_rows(folder), start=2):
        if row["outcome"] != KEPT:
            continue
        where = f"{folder / INDEX_FILE}:{line}"
        if not _VARIANT_ID.match(row["variant_id"] or ""):
            raise VariantIndexError(f"{where}: variant_id {row['variant_id']!r} is not "
                                    "<task>-v<k>")
        path = folder / row["file"]
        if Path(row["file"]).name != row["file"] or not path.is_file():
            raise VariantIndexError(f"{where}: file {row['file']!r} is not in {folder}")
        try:
            level = int(row["level"])
        except ValueError:
            raise VariantIndexError(f"{where}: level {row['level']!r} is not a number") from None
        variants.append(Variant(row["variant_id"], row["parent"], level,
                                row["transformations"], path,
                                row["physics_build"] or PHYSICS_BUILDS[0]))
    if not variants:
        raise VariantIndexError(f"{folder / INDEX_FILE}: no kept variant")
    return variants


def rejection_counts(rows: list[dict]) -> Counter:
    """How many candidates (and parents) were rejected, by reason."""
    return Counter(row["reason"] for row in rows if row["outcome"] == REJECTED)


def variant_tasks(folder: Path, level: str | None = None, tasks: str | None = None,
                  ) -> tuple[list[Task], dict[str, Path], list[Variant]]:
    """What ``run --variants DIR`` plays: the kept variants whose parents match the filters.

    Args:
        folder: the variants folder.
        level: keep variants of parents in these levels (``run --level``).
        tasks: keep variants of these parent task ids (``run --tasks``).

    Returns:
        The variants as tasks (id ``<task>-v<k>``, the parent's level), their arena files,
        and the variants themselves (parent, build).

    Raises:
        VariantIndexError: the folder's index is missing or malformed, or no kept variant
            matches the filters.
        TaskSelectionError: a malformed level or task id.
    """
    parents = {t.task_id for t in select_tasks(level, tasks, full=True)}
    chosen = [v for v in read_variants(folder) if v.parent in parents]
    if not chosen:
        raise VariantIndexError(f"{folder}: no kept variant of a task matching level={level!r} "
                                f"tasks={tasks!r}")
    return ([Task(v.variant_id, v.level, LEVEL_NAMES[v.level]) for v in chosen],
            {v.variant_id: v.path for v in chosen}, chosen)
