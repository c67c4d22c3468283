"""One model across the probes: pass rate per level under image, text, both and plan.

The probes play the same arenas with different inputs (``--observation``, ``--prompt
plan``); a model's pass rate moving between them separates perception (image against
text) from planning (closed loop against one open-loop plan).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from llm_aai.analysis.levels import LEVEL_NAMES
from llm_aai.analysis.stats import wilson_interval
from llm_aai.arena.catalog import resolve_arena_path
from llm_aai.logs.store import read_manifest
from llm_aai.plans.evaluate import evaluate_plan_episode
from llm_aai.plans.metrics import aggregate
from llm_aai.protocol import PaperProtocol

PROBE_ORDER = ("image", "text", "text (allocentric)", "both", "both (allocentric)", "plan")


def _cell(group: pd.DataFrame) -> str:
    agent = group[~group["infra_failure"]]
    k, n = int(agent["passed"].sum()), len(agent)
    if not n:
        return "-"
    low, high = wilson_interval(k, n)
    return f"{k}/{n} {k / n:.2f} [{low:.2f}, {high:.2f}]"


def probe_table(episodes: pd.DataFrame) -> pd.DataFrame:
    """Rows per model and level, one column per probe the runs hold (``k/n p [CI]``).

    Infrastructure failures are left out, as in every agent metric. A probe a model was
    not run under shows ``-``.
    """
    probes = [p for p in PROBE_ORDER if p in set(episodes["probe"])]
    probes += sorted(set(episodes["probe"]) - set(probes))
    rows = []
    for (model, level), group in episodes.groupby(["model", "level"], sort=True):
        row = {"model": model, "level": int(level), "level_name": LEVEL_NAMES.get(int(level))}
        for probe in probes:
            row[probe] = _cell(group[group["probe"] == probe])
        rows.append(row)
    return pd.DataFrame(rows, columns=["model", "level", "level_name", *probes])


def plan_metrics_table(episodes: pd.DataFrame, arenas_dir: str | Path | None = None,
                       by: str = "level") -> pd.DataFrame:
    """The plan probe's metrics per level (or ``task_id``), each plan driven again.

    Similarity to a reference plan and path efficiency need one (the oracle's); none is
    known here, so those columns are empty. Infrastructure failures are left out.

    Args:
        episodes: ``Runs.episodes``; only the ``plan`` probe's rows are used.
        arenas_dir: where the testbed's arena files are; None: each run's own (its
            manifest), then ``$LLM_AAI_ARENAS`` or the download cache.
        by: ``level`` or ``task_id``.

    Raises:
        ValueError: a plan that, driven again, did not take the logged steps.
    """
    rows = episodes[(episodes["probe"] == "plan") & ~episodes["infra_failure"]]
    metrics = []
    for run_dir, group in rows.groupby(rows["episode_dir"].map(lambda d: Path(d).parents[1])):
        manifest = read_manifest(run_dir)
        # the protocol the episodes played (a plan run's has max_scripts=1)
        protocol = PaperProtocol(**manifest.config.get("protocol", {}))
        where = arenas_dir if arenas_dir is not None else (
            (manifest.run_config or {}).get("arenas_dir"))
        for row in group.itertuples():
            metrics.append(evaluate_plan_episode(
                row.episode_dir, resolve_arena_path(row.task_id, where), protocol))
    if not metrics:
        return pd.DataFrame()
    return aggregate(metrics, by=by).reset_index()
