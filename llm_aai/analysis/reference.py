"""Children's and Animal-AI Olympics agents' results on the 40 tasks, shipped with the package.

The figures live in ``llm_aai/data/reference_populations.csv``; their provenance and method are
in ``reference_populations.md`` beside it. They are computed from the raw public data, not taken
from the AAI3 paper, whose children numbers double-count every trial.
"""

from __future__ import annotations

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
