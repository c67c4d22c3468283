"""The runs page's cards: a cost worded as ``analyze`` words it."""

from __future__ import annotations

import json

import pytest

from llm_aai.analysis import load_runs
from llm_aai.view.runs import run_summary
from tests.analysis.conftest import build_run


def _cost_shown(run) -> str:
    runs = load_runs([run], with_turns=False)
    summary = run_summary(runs.runs.iloc[0], runs.episodes)
    return dict(summary.totals)["cost"]


@pytest.mark.parametrize(("unpriced", "shown"), [
    (0, "$0.0600"),
    (2, ">= $0.0500 (2 of 12 episodes unpriced)"),
    (12, "unknown (no price)"),
])
def test_a_cost_partly_unknown_shows_the_known_part_as_analyze_does(tmp_path, unpriced, shown):
    # 12 episodes of $0.005 each; the first `unpriced` had a call of no known price
    run = build_run(tmp_path, model="alpha", levels=range(1, 2))
    for result_file in sorted(run.glob("episodes/*/result.json"))[:unpriced]:
        record = json.loads(result_file.read_text())
        result_file.write_text(json.dumps({**record, "cost_usd": None}))
    assert _cost_shown(run) == shown


def test_a_cost_logged_as_zero_with_tokens_used_is_unknown(tmp_path):
    """Logs from before prices were looked up recorded an unknown cost as 0."""
    run = build_run(tmp_path, model="alpha", levels=range(1, 2))
    for result_file in run.glob("episodes/*/result.json"):
        record = json.loads(result_file.read_text())
        result_file.write_text(json.dumps({**record, "cost_usd": 0.0}))
    assert _cost_shown(run) == "unknown (no price)"
