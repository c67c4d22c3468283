"""Originals against their procedural variants: a model's pass rates side by side, per level.

A model that passes the public testbed files much more often than fresh variants of the same
tasks (``run --variants``) may have seen the files, or solutions to them, in training: a
possible memorisation signal. The comparison is on the same tasks: the originals counted
are the parents of the variants played by that model. The gap has two 95 % intervals:
Newcombe's hybrid score interval for a difference of two proportions (built from the two
Wilson intervals, trials as if independent) and the cluster bootstrap over tasks, each task
resampled with its variants (``stats.paired_difference``, which also gives the paired
sign-flip p-value). Episodes of one task are not independent draws, so only a gap whose
interval over tasks lies above zero is flagged; the flag is a pointer to look closer, not a
test of contamination.
"""

from __future__ import annotations

import math

import pandas as pd

from llm_aai.analysis.levels import LEVEL_NAMES
from llm_aai.analysis.scored import scored
from llm_aai.analysis.stats import (
    DEFAULT_BOOTSTRAP,
    Bootstrap,
    format_clustered_rate,
    paired_difference,
    wilson_interval,
)

MEMORISATION_FLAG = "possible memorisation"
COLUMNS = ["label", "level", "level_name", "tasks", "original_k", "original_n", "original",
           "variant_k", "variant_n", "variant", "gap", "gap_low", "gap_high", "gap_boot_low",
           "gap_boot_high", "p_value", "flag"]


def gap_interval(k1: int, n1: int, k2: int, n2: int) -> tuple[float, float, float]:
    """``p1 - p2`` and Newcombe's 95 % interval for it (method 10, from Wilson intervals).

    Returns NaNs when either sample is empty.
    """
    if not n1 or not n2:
        return math.nan, math.nan, math.nan
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = wilson_interval(k1, n1)
    l2, u2 = wilson_interval(k2, n2)
    gap = p1 - p2
    low = gap - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    high = gap + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return gap, max(low, -1.0), min(high, 1.0)


def has_variants(episodes: pd.DataFrame) -> bool:
    """Whether any episode was played on a variant."""
    return "parent_task" in episodes and episodes["parent_task"].notna().any()


def variants_table(episodes: pd.DataFrame,
                   bootstrap: Bootstrap = DEFAULT_BOOTSTRAP) -> pd.DataFrame:
    """Per model label and level (and over all levels, level 0): originals against variants.

    Args:
        episodes: ``Runs.episodes`` of runs on the originals and runs with ``--variants``.
        bootstrap: draws and seed of the intervals over tasks.

    Returns:
        ``COLUMNS``: the tasks compared, passes and trials on each side (infrastructure
        failures left out), each rate as ``k/n p [Wilson] tasks[bootstrap]``, the gap
        (original minus variant) with Newcombe's interval and the interval over tasks
        (``gap_boot_*``, NaN with fewer than two tasks), the paired sign-flip p-value, and
        ``flag`` = ``MEMORISATION_FLAG`` when the interval over tasks lies above zero.

    Raises:
        ValueError: no episode was played on a variant.
    """
    if not has_variants(episodes):
        raise ValueError("no episode was played on a variant: run python -m llm_aai.run "
                         "--variants DIR (python -m llm_aai.variants make) and pass that run "
                         "with the runs on the originals")
    played = scored(episodes)
    rows = []
    for label, mine in played.groupby("label", sort=False):
        variants = mine[mine["parent_task"].notna()]
        if variants.empty:
            continue
        originals = mine[mine["parent_task"].isna()
                         & mine["task_id"].isin(set(variants["parent_task"]))]
        for level in sorted(set(variants["level"])):
            rows.append(_row(label, int(level), originals[originals["level"] == level],
                             variants[variants["level"] == level], bootstrap))
        rows.append(_row(label, 0, originals, variants, bootstrap))
    return pd.DataFrame(rows, columns=COLUMNS)


def _row(label: str, level: int, originals: pd.DataFrame, variants: pd.DataFrame,
         bootstrap: Bootstrap) -> dict:
    k1, n1 = int(originals["passed"].sum()), len(originals)
    k2, n2 = int(variants["passed"].sum()), len(variants)
    gap, low, high = gap_interval(k1, n1, k2, n2)
    original_task, variant_task = originals["task_id"], variants["parent_task"]
    per_original = originals["passed"].astype(float).groupby(original_task).agg(["sum", "count"])
    per_variant = variants["passed"].astype(float).groupby(variant_task).agg(["sum", "count"])
    tasks = sorted(set(per_original.index) & set(per_variant.index))
    boot_low = boot_high = p_value = math.nan
    if tasks:
        a, b = per_original.reindex(tasks), per_variant.reindex(tasks)
        paired = paired_difference(a["sum"], a["count"], b["sum"], b["count"], bootstrap)
        boot_low, boot_high, p_value = paired.low, paired.high, paired.p_value
    return {"label": label, "level": level,
            "level_name": LEVEL_NAMES.get(level, "all levels"), "tasks": len(tasks),
            "original_k": k1, "original_n": n1,
            "original": format_clustered_rate(originals["passed"], original_task, bootstrap),
            "variant_k": k2, "variant_n": n2,
            "variant": format_clustered_rate(variants["passed"], variant_task, bootstrap),
            "gap": gap, "gap_low": low, "gap_high": high,
            "gap_boot_low": boot_low, "gap_boot_high": boot_high, "p_value": p_value,
            "flag": MEMORISATION_FLAG if boot_low > 0 else ""}
