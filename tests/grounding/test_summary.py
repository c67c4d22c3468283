"""``analyze --by grounding``: per model and level, the share of true claims and failure classes."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

from llm_aai.analysis.stats import (
    Bootstrap,
    cluster_bootstrap_interval,
    format_interval,
    wilson_interval,
)
from llm_aai.cli.analyze import main as analyze
from llm_aai.grounding.summary import by_group, shares


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
    # one task: no interval over tasks ("-"), as in every table
    assert rows["seen"]["value"].endswith("] tasks- (+1 unverifiable)")
    assert rows["health_trend"]["value"].startswith("1/2 0.50 [")
    assert rows["reward"]["value"].startswith("1/3 0.33 [")
    assert rows["episodes perception"]["value"] == "1/1"


def test_analyze_by_grounding_without_grounding_says_how_to_make_it(claims_run, capsys):
    assert analyze([str(claims_run), "--by", "grounding"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"error: {claims_run / 'grounding.csv'}: not found "
                   "(run `python -m llm_aai.grounding RUN_DIR`)")


def _claims(task: str, level: int, kind: str, verdicts: str, agent: str = "m"):
    return [{"agent": agent, "level": str(level), "task": task, "episode": f"{task}_t1",
             "kind": kind, "verdict": {"t": "true", "f": "false", "u": "unverifiable"}[v]}
            for v in verdicts]


def test_a_kinds_share_gets_the_interval_over_tasks_beside_wilson():
    """Ten true claims in one task, ten false in another: Wilson over 20 claims is narrow
    around 0.5; resampling the two tasks gives all true, all false or half, so the interval
    over tasks is the whole [0, 1], and it is the one the rows show beside Wilson."""
    rows = _claims("01-04-03", 1, "bearing", "t" * 10) + _claims("01-06-02", 1, "bearing",
                                                                   "f" * 10 + "u")
    (share,) = shares(rows, Bootstrap(seed=2))
    expected = cluster_bootstrap_interval([10, 0], [10, 10], Bootstrap(seed=2))
    assert (share.tasks_low, share.tasks_high) == expected == (0.0, 1.0)
    low, high = wilson_interval(10, 20)
    assert share.render() == (f"10/20 0.50 {format_interval(low, high)} tasks[0.00, 1.00] "
                              "(+1 unverifiable)")
    assert 0.25 < low and high < 0.75


def test_by_group_adds_the_rows_over_all_levels():
    rows = (_claims("01-04-03", 1, "seen", "ttf") + _claims("02-02-01", 2, "seen", "tf")
            + _claims("02-02-01", 2, "seen", "t", agent="other"))
    episodes = [{"agent": "m", "level": "1", "failure": "perception"},
                {"agent": "m", "level": "2", "failure": "passed"},
                {"agent": "other", "level": "2", "failure": "passed"}]
    table = [(r["agent"], r["level"], r["what"], r["value"].split(" [")[0])
             for r in by_group(rows, episodes)]
    assert table == [("m", "1", "seen", "2/3 0.67"), ("m", "1", "episodes perception", "1/1"),
                     ("m", "2", "seen", "1/2 0.50"), ("m", "2", "episodes passed", "1/1"),
                     ("m", "all", "seen", "3/5 0.60"), ("m", "all", "episodes passed", "1/2"),
                     ("m", "all", "episodes perception", "1/2"),
                     ("other", "2", "seen", "1/1 1.00"), ("other", "2", "episodes passed", "1/1")]


def _edited(run: Path, out: Path, file: str, edit) -> Path:
    """A copy of ``run`` at ``out`` whose JSON ``file`` is edited in place by ``edit``."""
    shutil.copytree(run, out)
    data = json.loads((out / file).read_text())
    edit(data)
    (out / file).write_text(json.dumps(data))
    return out


def test_analyze_by_grounding_prints_the_notes_of_the_other_tables(grounded, tmp_path, capsys):
    """Played in one conversation across tasks, and given twice (a copy of the run): the table
    says its intervals take episodes as independent, and counts the copy's claims once."""
    run = _edited(grounded, tmp_path / "across", "manifest.json",
                  lambda data: data["run"]["config"]["modes"].update(context="across-tasks"))
    copy = shutil.copytree(run, tmp_path / "copy")
    table = tmp_path / "grounding.csv"
    assert analyze([str(run), str(copy), "--by", "grounding", "--csv", str(table)]) == 0
    notes = [line for line in capsys.readouterr().out.splitlines() if line.startswith("note:")]
    assert notes == [
        "note: claims played each trial's tasks in one conversation (--context across-tasks): "
        "its episodes are not independent (a task's outcome is told before the next), and the "
        "intervals, which take them as independent, may be too narrow",
        f"note: {copy}: 1 episode(s) of run claims already read from another directory, "
        "counted once"]
    with table.open(newline="") as handle:
        rows = {row["what"]: row for row in csv.DictReader(handle)}
    assert rows["seen"]["value"].startswith("4/8 0.50 [")  # once, not 8/16
    assert rows["seen"]["agent"] == "openai/fake (context across-tasks)"  # as in every table


def test_analyze_by_grounding_leaves_out_an_episode_lost_to_infrastructure(grounded, tmp_path,
                                                                           capsys):
    run = _edited(grounded, tmp_path / "lost", "episodes/01-04-03_t1/result.json",
                  lambda data: data.update(end_reason="infrastructure", infra_error="gone"))
    assert analyze([str(run), "--by", "grounding"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("no claims: none of the episodes counted has been grounded\n")
    assert "1 episode(s) lost to infrastructure (not counted as failures):" in out
