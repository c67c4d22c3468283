"""Plain-text tables for terminals and notebooks: models beside the reference populations.

Kept apart from the metrics so the numbers stay numeric DataFrames; only here are they turned
into strings like ``3/12 .25 [.09-.53]``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd

from llm_aai.analysis.metrics import with_reference
from llm_aai.analysis.reference import POPULATIONS, reference_levels
from llm_aai.analysis.stats import format_interval


def level_report(
    level_table: pd.DataFrame,
    overall: pd.DataFrame,
    reference: pd.DataFrame,
    populations: tuple[str, ...] = ("children", "olympics_top10"),
) -> pd.DataFrame:
    """Tabulate levels: each model's rate beside each population's.

    Models read ``k/n proportion [95% CI]``; populations read their pooled proportion with
    the interquartile range. A last row ``all`` pools every level.

    Args:
        level_table: ``pass_rates(episodes, by="level")``.
        overall: ``model_summary(episodes)`` (for the ``all`` row).
        reference: ``reference_populations()``.
        populations: reference columns to show.

    """
    merged = with_reference(level_table, reference, populations)
    labels = list(pd.unique(level_table["label"]))
    levels = sorted(int(level) for level in merged["level"].unique())
    rows = []
    for level in levels:
        at = merged[merged["level"] == level]
        row = {"level": str(level), "name": at["level_name"].iloc[0]}
        for label in labels:
            mine = at[at["label"] == label]
            row[label] = _rate(mine.iloc[0]) if len(mine) else "-"
        for population in populations:
            row[POPULATIONS.get(population, population)] = population_cell(
                at.iloc[0], population, reference)
        rows.append(row)
    rows.append(_overall_row(overall, labels, reference, populations, levels))
    return pd.DataFrame(rows)


def population_cell(row, population: str, reference: pd.DataFrame) -> str:
    """A population's figure on a level, as every level table words it.

    ``0.60 (IQR [0.50, 0.75])``: its pooled rate and interquartile range; over the tasks
    played of a level played in part (``reference.played_reference``), ``0.90 (1 of 4
    tasks)``, with no interquartile range.
    """
    rate = _p(row[f"{population}_proportion"])
    q1, q3 = row[f"{population}_q1"], row[f"{population}_q3"]
    if "tasks" not in reference or not (math.isnan(q1) and math.isnan(q3)):
        return f"{rate} (IQR {format_interval(q1, q3)})"
    levels = reference_levels(reference)
    at = levels[(levels["population"] == population) & (levels["level"] == int(row["level"]))]
    return f"{rate} ({at['tasks'].iloc[0]} of {at['level_tasks'].iloc[0]} tasks)"


def task_report(
    task_table: pd.DataFrame,
    reference: pd.DataFrame,
    populations: tuple[str, ...] = ("children", "olympics_top10"),
) -> pd.DataFrame:
    """Per task: each model's ``k/n`` and each population's proportion passing that task."""
    merged = with_reference(task_table, reference, populations)
    labels = list(pd.unique(task_table["label"]))
    rows = []
    for task_id in sorted(merged["task_id"].unique()):
        at = merged[merged["task_id"] == task_id]
        first = at.iloc[0]
        row = {"task": task_id, "level": str(int(first["level"])),
               "pass mark": f"{first['pass_mark']:g}"}
        for label in labels:
            mine = at[at["label"] == label]
            row[label] = _counts(mine.iloc[0]) if len(mine) else "-"
        for population in populations:
            row[POPULATIONS.get(population, population)] = _p(first[f"{population}_proportion"])
        rows.append(row)
    return pd.DataFrame(rows)


def summary_report(overall: pd.DataFrame) -> pd.DataFrame:
    """One line per model: pass rate, behaviour, infrastructure failures and cost."""
    return pd.DataFrame({
        "model": overall["label"],
        "episodes": overall["episodes"].astype(str),
        "infra failures": overall["infra_failures"].astype(str),
        "passed": [_rate(row) for _, row in overall.iterrows()],
        "scripts/episode": [f"{v:.1f}" for v in overall["mean_scripts_used"]],
        "invalid replies": [f"{i} ({_pct(r)})" for i, r in
                            zip(overall["invalid_replies"], overall["invalid_reply_rate"],
                                strict=True)],
        "mean reward": [f"{v:.2f}" for v in overall["mean_reward"]],
        "final health": [f"{v:.1f}" for v in overall["mean_final_health"]],
        "cost $": [cost_text(row, int(row["episodes"])) for _, row in overall.iterrows()],
    })


def compare_report(table: pd.DataFrame) -> pd.DataFrame:
    """``paired.compare_runs``'s table as text: rates, ``A - B [interval]`` and ``p``."""
    return pd.DataFrame({
        "measure": table["measure"],
        "level": [str(v) if v else "all" for v in table["level"]],
        "name": table["level_name"],
        "tasks (differ)": [f"{t} ({d})" for t, d in
                           zip(table["tasks"], table["differing"], strict=True)],
        "A": [f"{v:.2f} (n={n})" for v, n in zip(table["a"], table["a_n"], strict=True)],
        "B": [f"{v:.2f} (n={n})" for v, n in zip(table["b"], table["b_n"], strict=True)],
        "A - B": [f"{d:+.2f} {format_interval(low, high)}" for d, low, high in
                  zip(table["difference"], table["low"], table["high"], strict=True)],
        "p": [f"{p:.3g}" + ("" if exact else "*") for p, exact in
              zip(table["p_value"], table["exact"], strict=True)],
    })


def render(table: pd.DataFrame) -> str:
    """Left-aligned plain text with a header rule, for terminals without extra packages."""
    columns = list(table.columns)
    cells = [[str(value) for value in row] for row in table.itertuples(index=False)]
    widths = [max([len(str(name))] + [len(row[i]) for row in cells])
              for i, name in enumerate(columns)]
    lines = ["  ".join(str(name).ljust(w) for name, w in zip(columns, widths, strict=True)),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
              for row in cells]
    return "\n".join(lines)


def _overall_row(overall, labels, reference, populations, levels) -> dict[str, str]:
    row = {"level": "all", "name": f"{len(levels)} level{'s' if len(levels) != 1 else ''}"}
    for label in labels:
        row[label] = _rate(overall[overall["label"] == label].iloc[0])
    level_rows = reference[(reference["scope"] == "level") & reference["level"].isin(levels)]
    for population in populations:
        mine = level_rows[level_rows["population"] == population]
        k, n = int(mine["k"].sum()), int(mine["n"].sum())
        row[POPULATIONS.get(population, population)] = _p(k / n) if n else "-"
    return row


def _rate(row) -> str:
    if row["n"] == 0:
        return f"0/0 ({int(row['infra_failures'])} infra)"
    wilson = (f"{_counts(row)} {_p(row['proportion'])} "
              f"{format_interval(row['ci_low'], row['ci_high'])}")
    if "boot_low" not in row:
        return wilson
    return f"{wilson} tasks{format_interval(row['boot_low'], row['boot_high'])}"


def cost_text(cost: Mapping[str, float | int], episodes: int, dollars: str = "{:.2f}") -> str:
    """A cost cell: everything the run spent, what is not known and what is estimated, marked.

    Every table and the viewer's runs page word a cost this way, from ``metrics.priced_cost``:

    - ``1.23``: every call's cost known, in the episodes counted;
    - ``1.25 (with 3 attempts set aside or unfinished)``: the measured cost of attempts that
      are no result counts too, as ``--budget-usd`` counted it;
    - ``>= 1.23 (2 of 120 episodes unpriced)``: the known part, a lower bound;
      ``unknown (no price)`` when nothing's cost is known;
    - ``... + ~0.03 estimated for unanswered calls (in 1 episode)``: the charge for calls sent
      without a usable reply (timeouts), an estimate no usage measured, never added in.

    Args:
        cost: ``metrics.priced_cost`` of the episodes (and attempts).
        episodes: how many episodes it covers.
        dollars: how an amount is written (the viewer's ``"${:.4f}"``).

    """
    attempts = int(cost.get("attempts", 0))
    unpriced = [f"{n} of {total} {name} unpriced" for n, total, name in (
        (int(cost["unpriced_episodes"]), episodes, "episodes"),
        (int(cost.get("unpriced_attempts", 0)), attempts, "attempts")) if n]
    if unpriced and cost["unpriced_episodes"] == episodes \
            and cost.get("unpriced_attempts", 0) == attempts:
        text = "unknown (no price)"
    else:
        notes = [*unpriced] + ([f"with {_plural(attempts, 'attempt')} set aside or "
                                "unfinished"] if attempts else [])
        text = (">= " if unpriced else "") + dollars.format(cost["cost_usd"]) \
            + (f" ({'; '.join(notes)})" if notes else "")
    charged = [_plural(int(cost.get(f"unanswered_{name}s", 0)), name)
               for name in ("episode", "attempt") if cost.get(f"unanswered_{name}s", 0)]
    if charged:
        text += (f" + ~{dollars.format(cost['unanswered_cost_usd'])} estimated for unanswered "
                 f"calls (in {' and '.join(charged)})")
    return text


def _plural(count: int, name: str) -> str:
    return f"{count} {name}{'' if count == 1 else 's'}"


def _counts(row) -> str:
    infra = int(row["infra_failures"])
    overflows = int(row.get("context_overflows", 0) or 0)
    return (f"{int(row['k'])}/{int(row['n'])}" + (f"+{infra}i" if infra else "")
            + (f"+{overflows}c" if overflows else ""))


def _p(value: float) -> str:
    return "-" if value is None or math.isnan(value) else f"{value:.2f}"


def _pct(value: float) -> str:
    return "-" if math.isnan(value) else f"{100 * value:.1f}%"
