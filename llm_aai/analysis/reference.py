"""Children's and Animal-AI Olympics agents' results on the 40 tasks, shipped with the package.

The figures live in ``llm_aai/data/reference_populations.csv``; their provenance and method are
in ``reference_populations.md`` beside it. They are computed from the raw public data, not taken
from the AAI3 paper, whose children numbers double-count every trial.
"""

from __future__ import annotations

from collections.abc import Iterable
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
