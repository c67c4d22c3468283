"""What the marks of the pass-rate table mean, in words, for its legend and its cells' titles.

The table is ``analysis.report.level_report`` unchanged, so its cells carry the analysis'
shorthand: ``3/12 0.25 [0.09, 0.53] tasks[0.00, 0.75]``, or ``tasks-`` where the second
interval cannot be drawn. The runs page explains each mark once under the table and again in
the tooltip of every cell that shows it.
"""

from __future__ import annotations

from llm_aai.analysis.stats import DEFAULT_BOOTSTRAP

WILSON = ("[low, high] after k/n and the proportion: Wilson's 95% interval, counting every "
          "trial as an independent try")
OVER_TASKS = (f"tasks[low, high]: a 95% interval from redrawing the tasks themselves "
              f"({DEFAULT_BOOTSTRAP.draws} random redraws with replacement, seed "
              f"{DEFAULT_BOOTSTRAP.seed}); trials of one task share its difficulty, so this "
              "range, usually the wider, is the one to compare models by")
NO_TASK_INTERVAL = ("tasks-: the interval over tasks cannot be drawn, because the model "
                    "played fewer than two tasks here")
INFRA = "0/0 (n infra): every episode here was lost to an infrastructure error, none counted"
LEGEND = (WILSON, OVER_TASKS, NO_TASK_INTERVAL, INFRA)
"""Each mark of the table, in the order the legend lists them."""


def cell_title(value: object) -> str | None:
    """The tooltip of a table cell: what its interval over tasks (or its absence) means."""
    if not isinstance(value, str):
        return None
    if " tasks[" in value:
        return f"{WILSON}. {OVER_TASKS}."
    if value.endswith(" tasks-"):
        return f"{WILSON}. {NO_TASK_INTERVAL}."
    return None
