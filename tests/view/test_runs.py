"""The runs page's cards: a cost worded as ``analyze`` words it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llm_aai.analysis import load_runs
from llm_aai.view import build_site
from llm_aai.view.runs import run_summary
from tests.analysis.conftest import build_run

V1_MANIFEST = Path(__file__).parents[1] / "logs" / "data" / "manifest-v1.json"


def _cost_shown(run) -> str:
    runs = load_runs([run], with_turns=False)
    summary = run_summary(runs.runs.iloc[0], runs.episodes, runs.attempts)
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


def _rewrite(run, episode: str, **fields) -> None:
    result_file = run / "episodes" / episode / "result.json"
    result_file.write_text(json.dumps({**json.loads(result_file.read_text()), **fields}))


def _costs_zero(run) -> None:
    for result_file in run.glob("episodes/*/result.json"):
        _rewrite(run, result_file.parent.name, cost_usd=0.0)


def test_a_cost_logged_as_zero_with_tokens_used_is_unknown_in_logs_before_prices(tmp_path):
    """Logs from before prices were looked up (no cost_known, no price) recorded 0 for unknown."""
    run = build_run(tmp_path, model="alpha", levels=range(1, 2))
    manifest = json.loads((run / "manifest.json").read_text())
    record = manifest.pop("run")
    old = json.loads(V1_MANIFEST.read_text())["config"]  # has no cost_known, no price_per_mtok
    (run / "manifest.json").write_text(json.dumps({
        **manifest, "manifest_version": 2, "run_config": record["config"],
        "config": {**old, "model": "alpha", "tasks": record["tasks"]}}))
    _costs_zero(run)
    assert _cost_shown(run) == "unknown (no price)"


def test_a_cost_of_zero_with_every_price_known_is_zero(tmp_path):
    """A model priced at $0 (a local model, --price-per-mtok 0,0) cost $0, as analyze says."""
    run = build_run(tmp_path, model="alpha", levels=range(1, 2))  # its manifest: cost_known
    _costs_zero(run)
    assert _cost_shown(run) == "$0.0000"


def test_a_run_whose_calls_all_timed_out_shows_the_estimate_charged(tmp_path):
    """No tokens, but calls sent and charged an estimate: not 'no model calls'."""
    run = build_run(tmp_path, model="alpha", levels=range(1, 2))
    for result_file in run.glob("episodes/*/result.json"):
        _rewrite(run, result_file.parent.name, cost_usd=0.0, input_tokens=0, output_tokens=0)
    _rewrite(run, "01-06-02_t1", unanswered_cost_usd=0.03)
    assert _cost_shown(run) == ("$0.0000 + ~$0.0300 estimated for unanswered calls "
                                "(in 1 episode)")


def test_the_cost_counts_attempts_set_aside_and_unanswered_calls_as_analyze_does(tmp_path):
    """An attempt set aside was paid for; a call that timed out was charged an estimate."""
    run = build_run(tmp_path, model="alpha", levels=range(1, 2),
                    infra=lambda task, level, trial: (task, trial) == ("01-04-03", 1))
    result_file = run / "episodes" / "01-06-02_t1" / "result.json"
    record = json.loads(result_file.read_text())
    result_file.write_text(json.dumps({**record, "unanswered_cost_usd": 0.03}))
    assert _cost_shown(run) == ("$0.0570 (with 1 attempt set aside or unfinished) + ~$0.0300 "
                                "estimated for unanswered calls (in 1 episode)")


def test_the_runs_page_shows_what_the_attempts_spent(tmp_path):
    """The site passes each run's attempts to its card (load_runs reads them)."""
    run = build_run(tmp_path, model="alpha", levels=range(1, 2),
                    infra=lambda task, level, trial: (task, trial) == ("01-04-03", 1))
    build_site([run], tmp_path / "site")  # the hand-made run has no arenas to draw: no matter
    assert "with 1 attempt set aside or unfinished" in (tmp_path / "site" / "index.html") \
        .read_text()


def test_an_attempt_whose_log_is_damaged_is_noted_on_the_runs_page(tmp_path):
    """Not a reason to refuse the run: the attempt is no result, its cost unknown."""
    run = build_run(tmp_path, model="alpha", levels=range(1, 2),
                    infra=lambda task, level, trial: (task, trial) == ("01-04-03", 1))
    turns = run / "episodes" / "01-04-03_t1.attempt-1" / "turns.jsonl"
    turns.write_text("{not json\n" + turns.read_text())
    assert _cost_shown(run) == (">= $0.0560 (1 of 1 attempts unpriced; with 1 attempt set "
                                "aside or unfinished)")
    build_site([run], tmp_path / "site")
    assert "logs cannot be read" in (tmp_path / "site" / "index.html").read_text()


def test_the_runs_page_compares_labels_over_the_tasks_they_share(tmp_path):
    """As analyze: alpha played level 1 whole, beta 01-04-03 alone."""
    import shutil

    whole = build_run(tmp_path, model="alpha", levels=range(1, 2))
    part = build_run(tmp_path, model="beta", levels=range(1, 2))
    for folder in (part / "episodes").iterdir():
        if not folder.name.startswith("01-04-03"):
            shutil.rmtree(folder)
    build_site([whole, part], tmp_path / "site")
    page = (tmp_path / "site" / "index.html").read_text()
    assert "0.90 (1 of 4 tasks)" in page and "the rates of alpha there are over" in page
