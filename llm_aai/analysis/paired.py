"""Paired comparison of two runs on the same tasks: difference, task-bootstrap interval, p-value.

Two runs (two models, modes, prompts, or originals against their variants) are paired by task:
a variant counts under its testbed task (``parent_task``), so ``analyze ORIGINALS VARIANTS
--compare`` compares each task with its own variants. Infrastructure failures are left out.
Each measure (``passed``; ``progress``, the partial credit; ``nearer``, the share of the way
to the nearest goal closed, when both runs' episodes carry it) is compared per level and over
all levels with ``stats.paired_difference``.
"""

from __future__ import annotations

import pandas as pd

from llm_aai.analysis.levels import LEVEL_NAMES
from llm_aai.analysis.scored import scored
from llm_aai.analysis.stats import DEFAULT_BOOTSTRAP, Bootstrap, paired_difference

MEASURES = ("passed", "progress")
OPTIONAL_MEASURES = ("nearer",)
"""Compared when both runs' episodes have the column (NaN: the episode has no such value)."""
COLUMNS = ["measure", "level", "level_name", "tasks", "differing", "a_n", "b_n", "a", "b",
           "difference", "low", "high", "p_value", "exact"]


def progress(episodes: pd.DataFrame) -> pd.Series:
    """Partial credit per episode: the share of the pass mark's reward obtained, in [0, 1].

    A pass is 1; otherwise ``reward / pass_mark`` clipped to [0, 1], so an agent that took
    one of two needed balls shows 0.5 where the pass rate shows 0. A pass mark at or below
    zero has no share to take: such an episode counts 1 if passed, else 0.
    """
    mark = episodes["pass_mark"].astype(float)
    share = (episodes["reward"].astype(float) / mark.where(mark > 0)).clip(0.0, 1.0).fillna(0.0)
    return share.where(~episodes["passed"].astype(bool), 1.0)


def task_of(episodes: pd.DataFrame) -> pd.Series:
    """The task an episode pairs on: a variant's testbed task, else its own."""
    if "parent_task" not in episodes:
        return episodes["task_id"]
    return episodes["parent_task"].where(episodes["parent_task"].notna(), episodes["task_id"])


def compare_runs(a: pd.DataFrame, b: pd.DataFrame, *, name_a: str = "A", name_b: str = "B",
                 bootstrap: Bootstrap = DEFAULT_BOOTSTRAP) -> pd.DataFrame:
    """Per measure and level (level 0 = all levels): A's and B's rates, A - B, interval, p.

    Only the tasks both runs have a result on are paired (the others: ``unpaired_tasks``).

    Args:
        a: ``Runs.episodes`` of run A.
        b: those of run B.
        name_a: how errors name A (its directory).
        name_b: how errors name B.
        bootstrap: draws and seed of the intervals and of sampled flips.

    Raises:
        ValueError: the runs share no task, naming both.
    """
    a, b = _played(a), _played(b)
    shared = sorted(set(a["pair_task"]) & set(b["pair_task"]))
    if not shared:
        raise ValueError(f"{name_a} and {name_b} share no task with a result: nothing to pair "
                         f"(A played {_some(a)}; B played {_some(b)})")
    level_of = a.drop_duplicates("pair_task").set_index("pair_task")["level"]
    rows = []
    optional = tuple(m for m in OPTIONAL_MEASURES if m in a and m in b)
    for measure in (*MEASURES, *optional):
        per_a = a.groupby("pair_task")[measure].agg(["sum", "count"]).reindex(shared)
        per_b = b.groupby("pair_task")[measure].agg(["sum", "count"]).reindex(shared)
        levels = level_of.reindex(shared).astype(int)
        for level in [*sorted(set(levels)), 0]:
            chosen = (levels == level).to_numpy() if level else slice(None)
            pa, pb = per_a[chosen], per_b[chosen]
            if not ((pa["count"] > 0) & (pb["count"] > 0)).any():
                continue  # an optional measure no task of this level has on both sides
            result = paired_difference(pa["sum"], pa["count"], pb["sum"], pb["count"],
                                       bootstrap)
            rows.append({"measure": measure, "level": level,
                         "level_name": LEVEL_NAMES.get(level, "all levels"),
                         "tasks": result.tasks, "differing": result.differing,
                         "a_n": int(pa["count"].sum()),
                         "b_n": int(pb["count"].sum()), "a": result.rate_a, "b": result.rate_b,
                         "difference": result.difference, "low": result.low,
                         "high": result.high, "p_value": result.p_value, "exact": result.exact})
    return pd.DataFrame(rows, columns=COLUMNS)


def unpaired_tasks(a: pd.DataFrame, b: pd.DataFrame) -> tuple[list[str], list[str]]:
    """The tasks (as paired) with a result only in A, and only in B, sorted.

    ``compare_runs`` leaves them out: a task one run lacks has no difference to take. A task
    whose episodes were all lost to infrastructure or a context overflow has no result.
    """
    tasks_a, tasks_b = (set(task_of(scored(side))) for side in (a, b))
    return sorted(tasks_a - tasks_b), sorted(tasks_b - tasks_a)


def _played(episodes: pd.DataFrame) -> pd.DataFrame:
    played = scored(episodes).copy()
    played["pair_task"] = task_of(played)
    played["passed"] = played["passed"].astype(float)
    played["progress"] = progress(played)
    return played


def _some(episodes: pd.DataFrame) -> str:
    tasks = sorted(set(episodes["pair_task"]))
    if not tasks:
        return "no task with a result"
    return f"{len(tasks)} task(s), e.g. {', '.join(tasks[:3])}"
