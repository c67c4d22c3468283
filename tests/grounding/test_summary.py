"""``analyze --by grounding``: per model and level, the share of true claims and failure classes."""

from __future__ import annotations

import csv

from llm_aai.cli.analyze import main as analyze


def test_analyze_by_grounding_gives_shares_with_intervals_and_failure_classes(
        grounded, tmp_path, capsys):
    table = tmp_path / "grounding.csv"
    assert analyze([str(grounded), "--by", "grounding", "--csv", str(table)]) == 0
    out = capsys.readouterr().out
    assert "fake" in out  # the model's name as the run logged it
    with table.open(newline="") as handle:
        rows = {row["what"]: row for row in csv.DictReader(handle)}
    assert rows["seen"]["level"] == "1"
    assert rows["seen"]["value"].startswith("4/8 0.50 [")
    assert rows["seen"]["value"].endswith("] (+1 unverifiable)")
    assert rows["health_trend"]["value"].startswith("1/2 0.50 [")
    assert rows["reward"]["value"].startswith("1/3 0.33 [")
    assert rows["episodes perception"]["value"] == "1/1"


def test_analyze_by_grounding_without_grounding_says_how_to_make_it(claims_run, capsys):
    assert analyze([str(claims_run), "--by", "grounding"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"error: {claims_run / 'grounding.csv'}: not found "
                   "(run `python -m llm_aai.grounding RUN_DIR`)")
