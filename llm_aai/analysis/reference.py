"""Children's and Animal-AI Olympics agents' results on the 40 tasks, shipped with the package.

The figures live in ``llm_aai/data/reference_populations.csv``; their provenance and method are
in ``reference_populations.md`` beside it. They are computed from the raw public data, not taken
from the AAI3 paper, whose children numbers double-count every trial.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from importlib import resources

import pandas as pd

POPULATIONS: dict[str, str] = {
    "children": "Children 6-10 (n=59)",
    "children_all": "Children 6-10, all (n=93-105)",
    "olympics_top10": "AAI Olympics 2019 top 10",
}
"""Population key -> display name used in tables and figures."""

REFERENCE_FILE = "reference_populations.csv"


def reference_populations() -> pd.DataFrame:
    """Load the reference table: one row per population x scope (overall, level, task).

    Columns: ``population, scope, level, level_name, task_id, pass_mark, individuals, k, n,
    proportion, q1, median, q3`` (quartiles only on level rows, pass marks only on task rows).
    """
    source = resources.files("llm_aai").joinpath("data", REFERENCE_FILE)
    with source.open("r", encoding="utf-8") as handle:
        table = pd.read_csv(handle, dtype={"task_id": "string", "population": "string",
                                           "scope": "string", "level_name": "string"})
    table["level"] = table["level"].astype("Int64")
    table["individuals"] = table["individuals"].astype("Int64")
    return table


def reference_levels(reference: pd.DataFrame | None = None) -> pd.DataFrame:
    """Only the per-level rows (what the comparison figure draws)."""
    reference = reference_populations() if reference is None else reference
    levels = reference[reference["scope"] == "level"].copy()
    levels["level"] = levels["level"].astype(int)
    return levels.reset_index(drop=True)


def reference_tasks(reference: pd.DataFrame | None = None) -> pd.DataFrame:
    """Only the per-task rows."""
    reference = reference_populations() if reference is None else reference
    tasks = reference[reference["scope"] == "task"].copy()
    tasks["level"] = tasks["level"].astype(int)
    return tasks.reset_index(drop=True)


def partly_played(task_ids: Iterable[str],
                  reference: pd.DataFrame | None = None) -> dict[int, tuple[list[str], int]]:
    """The levels of which some, not all, of the reference's tasks were played.

    Returns:
        ``level -> (the reference tasks played, how many the reference has on the level)``;
        a level none of whose reference tasks was played is not one (its rate stays the
        whole level's, and ``notes.reference_notes`` says the tasks are outside the 40).

    """
    tasks = reference_tasks(reference)
    tasks = tasks[tasks["population"] == tasks["population"].iloc[0]]
    played = set(task_ids)
    partly = {}
    for level, group in tasks.groupby("level"):
        mine = sorted(set(group["task_id"]) & played)
        if 0 < len(mine) < len(group):
            partly[int(level)] = (mine, len(group))
    return partly


def played_reference(task_ids: Iterable[str],
                     reference: pd.DataFrame | None = None) -> pd.DataFrame:
    """The reference with each level's figures over the tasks of it that were played.

    A run that played part of a level is compared with what the children and the agents did
    on those tasks, not on the whole level (whose other tasks may be much easier or harder):
    a level row of ``partly_played`` is pooled from its played tasks' rows (``k``, ``n``,
    ``proportion``), with no quartiles (NaN: the per-individual rates over part of a level are
    not shipped). The other rows are as ``reference_populations`` gives them, so the tables
    of a run of whole levels are unchanged. Level rows gain ``tasks``, the reference tasks
    they cover, of the level's ``level_tasks``.
    """
    reference = reference_populations() if reference is None else reference
    task_ids = list(task_ids)
    partly = partly_played(task_ids, reference)
    tasks = reference_tasks(reference)
    out = reference.copy()
    is_level = out["scope"] == "level"
    counts = tasks.groupby(["population", "level"])["task_id"].count()
    out.loc[is_level, "level_tasks"] = [counts.get((p, int(lv)), 0) for p, lv in
                                        zip(out.loc[is_level, "population"],
                                            out.loc[is_level, "level"], strict=True)]
    out["tasks"] = out["level_tasks"]
    for level, (played, _) in partly.items():
        for population, rows in tasks[tasks["task_id"].isin(played)].groupby("population"):
            at = is_level & (out["population"] == population) & (out["level"] == level)
            k, n = int(rows["k"].sum()), int(rows["n"].sum())
            out.loc[at, ["k", "n", "proportion", "q1", "median", "q3", "tasks"]] = \
                [k, n, k / n, float("nan"), float("nan"), float("nan"), len(played)]
    out[["tasks", "level_tasks"]] = out[["tasks", "level_tasks"]].astype("Int64")
    return out


Differing = dict[int, tuple[list[str], dict[str, list[str]]]]
"""``level -> (the tasks the populations are over, each label's tasks that are not those)``."""


def shared_tasks(tasks_by_label: Mapping[str, Iterable[str]],
                 reference: pd.DataFrame | None = None) -> tuple[list[str], Differing]:
    """The tasks to take the populations over when the labels played different tasks of a level.

    A table has one column per population beside every label, so on a level the labels played
    different tasks of (alpha all 4, beta 01-04-03 alone) the populations are taken over the
    tasks every label that played the level played (01-04-03): beta's rate is then compared
    with theirs over its own tasks, and alpha's is over more tasks than theirs, which the
    caller says (``notes.reference_notes``). Where those labels share no task of the level,
    the populations are over every task of it played. Tasks outside the reference are kept.

    Args:
        tasks_by_label: each label's tasks played.
        reference: ``reference_populations()``.

    Returns:
        The tasks to give ``played_reference``, and, on each level whose labels played
        different tasks of the reference's, the tasks the populations are over and the
        labels whose tasks of the level are not those, with their tasks (``Differing``).

    """
    tasks = reference_tasks(reference)
    level_of = dict(zip(tasks["task_id"], tasks["level"], strict=False))
    played = {label: set(ids) for label, ids in tasks_by_label.items()}
    chosen = {t for ids in played.values() for t in ids if t not in level_of}
    differing = {}
    for level in sorted(set(level_of.values())):
        mine = {label: {t for t in ids if level_of.get(t) == level}
                for label, ids in played.items()}
        mine = {label: ids for label, ids in mine.items() if ids}
        if not mine:
            continue
        common = set.intersection(*mine.values()) or set.union(*mine.values())
        chosen |= common
        others = {label: sorted(ids) for label, ids in sorted(mine.items()) if ids != common}
        if others:
            differing[int(level)] = (sorted(common), others)
    return sorted(chosen), differing


def compared_reference(episodes: pd.DataFrame,
                       reference: pd.DataFrame | None = None) -> pd.DataFrame:
    """``played_reference`` over the tasks the labels of ``episodes`` share (``shared_tasks``).

    What every table with populations beside its labels compares them with.
    """
    return played_reference(shared_tasks(tasks_by_label(episodes), reference)[0], reference)


def tasks_by_label(episodes: pd.DataFrame) -> dict[str, set[str]]:
    """Each label's tasks played, from episodes with ``label`` and ``task_id`` columns."""
    return {str(label): set(group["task_id"])
            for label, group in episodes.groupby("label", sort=False)}
