"""One model across the probes: pass rate per level under image, text, both and plan.

The probes play the same arenas with different inputs (``--observation``, ``--prompt
plan``); a model's pass rate moving between them separates perception (image against
text) from planning (closed loop against one open-loop plan).
"""

from __future__ import annotations

import pandas as pd

from llm_aai.analysis.levels import LEVEL_NAMES
from llm_aai.analysis.stats import wilson_interval

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
