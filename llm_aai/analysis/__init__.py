"""Analysis of runs: tidy tables, pass rates with Wilson intervals, reference populations.

pandas is used throughout; matplotlib only inside ``llm_aai.analysis.plots``'s drawing
functions, which import it when first called, so loading and tabulating runs needs no
plotting stack.
"""

from llm_aai.analysis.levels import LEVEL_NAMES, level_name
from llm_aai.analysis.load import (
    INFRASTRUCTURE,
    RunDirectoryError,
    Runs,
    load_runs,
    pooling_conflicts,
    repeated_seeds,
)
from llm_aai.analysis.metrics import (
    infra_failures,
    model_summary,
    pass_rates,
    with_reference,
)
from llm_aai.analysis.plots import plot_pass_rates
from llm_aai.analysis.reference import (
    POPULATIONS,
    reference_levels,
    reference_populations,
    reference_tasks,
)
from llm_aai.analysis.report import level_report, render, summary_report, task_report
from llm_aai.analysis.stats import wilson_interval

__all__ = [
    "INFRASTRUCTURE",
    "LEVEL_NAMES",
    "POPULATIONS",
    "RunDirectoryError",
    "Runs",
    "infra_failures",
    "level_name",
    "level_report",
    "load_runs",
    "pooling_conflicts",
    "repeated_seeds",
    "model_summary",
    "pass_rates",
    "plot_pass_rates",
    "reference_levels",
    "reference_populations",
    "reference_tasks",
    "render",
    "summary_report",
    "task_report",
    "wilson_interval",
    "with_reference",
]
