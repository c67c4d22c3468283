"""Pass rates and behaviour metrics per model, per level or per task.

Infrastructure failures (the provider never answered) say nothing about the agent, so they are
excluded from every agent metric and reported in their own ``infra_failures`` column.
"""

from __future__ import annotations

import pandas as pd

from llm_aai.analysis.levels import LEVEL_NAMES
from llm_aai.analysis.reference import reference_levels, reference_tasks
from llm_aai.analysis.scored import context_overflows, scored
from llm_aai.analysis.stats import (
    DEFAULT_BOOTSTRAP,
    Bootstrap,
    cluster_bootstrap_interval,
    wilson_interval,
)

GROUPINGS = {"level": ["level"], "task": ["task_id", "level"]}


def pass_rates(episodes: pd.DataFrame, by: str = "level",
               bootstrap: Bootstrap = DEFAULT_BOOTSTRAP) -> pd.DataFrame:
    """Proportion of trials passed per model label and level (or task), with Wilson 95% CIs.

    Args:
        episodes: ``Runs.episodes``.
        by: ``"level"`` or ``"task"``.
        bootstrap: draws and seed of the cluster-bootstrap interval over tasks
            (``boot_low``, ``boot_high``; NaN with fewer than two tasks).

    Returns:
        One row per label x group: ``label, level[, task_id, pass_mark], level_name, tasks,
        episodes, infra_failures, k, n, proportion, ci_low, ci_high, boot_low, boot_high,
        mean_reward, mean_final_health``, where ``n`` excludes infrastructure failures.

    """
    if by not in GROUPINGS:
        raise ValueError(f"by must be one of {sorted(GROUPINGS)}, got {by!r}")
    keys = ["label", *GROUPINGS[by]]
    rows = []
    for key, group in _groups(episodes, keys):
        row = dict(zip(keys, key, strict=True))
        if by == "task":
            row["pass_mark"] = group["pass_mark"].iloc[0]
        row["level_name"] = LEVEL_NAMES.get(int(row["level"]))
        row["tasks"] = group["task_id"].nunique()
        row.update(_outcome(group, bootstrap))
        rows.append(row)
    return pd.DataFrame(rows, columns=_columns(keys, by))


def model_summary(episodes: pd.DataFrame,
                  bootstrap: Bootstrap = DEFAULT_BOOTSTRAP,
                  attempts: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per model label over all its episodes.

    Columns: ``label, model, prompt, runs, tasks, episodes, infra_failures, k, n, proportion,
    ci_low, ci_high, mean_reward, mean_final_health, mean_scripts_used, invalid_replies,
    scripts, invalid_reply_rate, input_tokens, output_tokens`` and the cost of
    ``priced_cost`` (its episodes and the label's ``attempts``, ``Runs.attempts``). The
    invalid-reply rate is replies that broke the script grammar over all replies, in agent
    (non-infra) episodes.
    """
    rows = []
    for (label,), group in _groups(episodes, ["label"]):
        agent = group[~group["infra_failure"]]
        scripts = int(agent["scripts_used"].sum())
        invalid = int(agent["invalid_replies"].sum())
        rows.append({
            "label": label,
            "model": group["model"].iloc[0],
            "prompt": group["prompt"].iloc[0],
            "runs": group["run_id"].nunique(),
            "tasks": group["task_id"].nunique(),
            **_outcome(group, bootstrap),
            "mean_scripts_used": agent["scripts_used"].mean() if len(agent) else float("nan"),
            "invalid_replies": invalid,
            "scripts": scripts,
            "invalid_reply_rate": invalid / scripts if scripts else float("nan"),
            "input_tokens": int(group["input_tokens"].sum()),
            "output_tokens": int(group["output_tokens"].sum()),
            **priced_cost(group, None if attempts is None
                          else attempts[attempts["label"] == label]),
        })
    return pd.DataFrame(rows)


def priced_cost(episodes: pd.DataFrame,
                attempts: pd.DataFrame | None = None) -> dict[str, float | int]:
    """What the episodes and the attempts set aside or unfinished beside them spent.

    Every table and the viewer's runs page show this (``report.cost_text`` words it), so
    the cost a reader sees is what ``--budget-usd`` counted, measured and estimated apart:

    - ``cost_usd``: the measured cost known, the episodes' and the ``attempts``' (the calls
      of an attempt set aside, ``Runs.attempts``, were paid for as the counted ones were);
    - ``unpriced_episodes``, ``unpriced_attempts``: those whose cost is not known
      (``cost_known`` False: a call of no known price); ``attempts``: how many there are;
    - ``unanswered_cost_usd``: the estimate charged for calls sent without a usable reply
      (timeouts), which no usage measured; ``unanswered_episodes``, ``unanswered_attempts``:
      how many were charged one.

    An episode with a call of no known price has no cost (a run without a price recorded 0s
    that are not zero): summing it as 0 would understate the cost, and calling the whole
    cost unknown would hide the part that is known.
    """
    parts = [episodes] if attempts is None else [episodes, attempts]
    known = [part["cost_known"].astype(bool) for part in parts]
    charged = [part["unanswered_cost_usd"].fillna(0.0).astype(float) for part in parts]
    return {
        "cost_usd": float(sum(part["cost_usd"].where(k).sum()
                              for part, k in zip(parts, known, strict=True))),
        "unpriced_episodes": int((~known[0]).sum()),
        "attempts": 0 if attempts is None else len(attempts),
        "unpriced_attempts": 0 if attempts is None else int((~known[1]).sum()),
        "unanswered_cost_usd": float(sum(c.sum() for c in charged)),
        "unanswered_episodes": int((charged[0] > 0).sum()),
        "unanswered_attempts": int((charged[1] > 0).sum()) if attempts is not None else 0,
    }


def infra_failures(episodes: pd.DataFrame) -> pd.DataFrame:
    """List the episodes lost to infrastructure, with their error, for reporting."""
    columns = ["label", "run_id", "episode_id", "task_id", "trial", "attempts", "infra_error"]
    return episodes.loc[episodes["infra_failure"], columns].reset_index(drop=True)


def with_reference(
    table: pd.DataFrame,
    reference: pd.DataFrame,
    populations: tuple[str, ...] = ("children", "olympics_top10"),
) -> pd.DataFrame:
    """Add each population's figures beside a ``pass_rates`` table.

    Level tables gain ``<pop>_proportion, <pop>_q1, <pop>_median, <pop>_q3``; task tables gain
    ``<pop>_proportion`` (the proportion of that population passing the task).
    """
    by_task = "task_id" in table.columns
    source = reference_tasks(reference) if by_task else reference_levels(reference)
    key = "task_id" if by_task else "level"
    stats = ["proportion"] if by_task else ["proportion", "q1", "median", "q3"]
    merged = table.copy()
    for population in populations:
        rows = source[source["population"] == population]
        if rows.empty:
            raise ValueError(f"no reference population {population!r}")
        part = rows[[key, *stats]].rename(columns={s: f"{population}_{s}" for s in stats})
        merged = merged.merge(part, on=key, how="left")
    return merged


def _groups(episodes: pd.DataFrame, keys: list[str]):
    """Group in a stable order: labels as first loaded, then the grouping keys ascending."""
    order = {label: i for i, label in enumerate(pd.unique(episodes["label"]))}
    ordered = episodes.assign(_order=episodes["label"].map(order))
    ordered = ordered.sort_values(["_order", *keys[1:]], kind="stable")
    return ordered.groupby(keys, sort=False)


def _outcome(group: pd.DataFrame, bootstrap: Bootstrap) -> dict[str, float | int]:
    """Count passes; add the proportion, its Wilson and task-bootstrap intervals, means."""
    overflow = context_overflows(group)
    agent = scored(group)
    k, n = int(agent["passed"].sum()), len(agent)
    low, high = wilson_interval(k, n)
    # a variant is clustered with its testbed task: they share the task's logic
    task = agent["parent_task"].where(agent["parent_task"].notna(), agent["task_id"]) \
        if "parent_task" in agent else agent["task_id"]
    per_task = agent["passed"].astype(float).groupby(task).agg(["sum", "count"])
    boot_low, boot_high = cluster_bootstrap_interval(per_task["sum"], per_task["count"],
                                                     bootstrap)
    return {
        "episodes": len(group),
        "infra_failures": int(group["infra_failure"].sum()),
        "context_overflows": int(overflow.sum()),
        "k": k,
        "n": n,
        "proportion": k / n if n else float("nan"),
        "ci_low": low,
        "ci_high": high,
        "boot_low": boot_low,
        "boot_high": boot_high,
        "mean_reward": agent["reward"].mean() if n else float("nan"),
        "mean_final_health": agent["final_health"].mean() if n else float("nan"),
    }


def _columns(keys: list[str], by: str) -> list[str]:
    extra = ["pass_mark"] if by == "task" else []
    return [*keys, *extra, "level_name", "tasks", "episodes", "infra_failures",
            "context_overflows", "k", "n",
            "proportion", "ci_low", "ci_high", "boot_low", "boot_high", "mean_reward",
            "mean_final_health"]
