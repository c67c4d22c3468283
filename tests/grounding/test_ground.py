"""Grounding a real run: every claim of a fake-server run's Thinks judged as its arena says."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from llm_aai.cli.grounding import main
from llm_aai.cli.main import main as llm_aai_command
from llm_aai.grounding import GroundingError, ground_run

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden_run" / "heuristic-2-tasks"

EXPECTED = [  # (turn, kind, subject, verdict), in the order the Thinks make them
    (1, "seen", "green ball", "true"),
    (1, "bearing", "green ball", "true"),
    (1, "distance", "green ball", "true"),
    (1, "seen", "red ball", "false"),  # straight ahead, but hidden behind the wall
    (1, "bearing", "red ball", "false"),
    (1, "not_seen", "yellow ball", "true"),  # behind the agent
    (1, "bearing", "yellow ball", "true"),  # "must be behind me": a belief that says where
    (1, "seen", "wall", "true"),
    (1, "bearing", "wall", "true"),
    (1, "seen", "ramp", "false"),  # the arena has none
    (1, "seen", "box", "true"),
    (1, "bearing", "box", "true"),
    (1, "not_seen", "red zone", "true"),  # the death zone lies behind the wall
    (1, "seen", "tunnel", "false"),  # out of view, to the right
    (2, "seen", "green ball", "true"),
    (2, "bearing", "green ball", "false"),  # it is to the right
    (2, "distance", "green ball", "false"),  # 11 m, not 3
    (2, "not_seen", "green ball", "false"),
    (2, "seen", "red ball", "unverifiable"),  # "probably somewhere": out of sight, no place
    (2, "health_trend", "health", "false"),  # GPT-4o's "My health has increased"
    (2, "reward", "any ball", "false"),  # "... confirming the collection"
    (2, "health_trend", "health", "true"),
    (3, "health_comparison", "health", "false"),  # Claude's "increased from 84.2 to 35.4"
    (3, "reward", "green ball", "false"),  # "I have successfully collected the green ball"
    (3, "health_comparison", "health", "true"),
    (3, "reward", "ball", "true"),  # "I have not collected any ball yet"
    (3, "seen", "red ball", "false"),
    (3, "bearing", "red ball", "false"),
]


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_every_claim_of_the_fake_run_gets_the_verdict_its_arena_gives(grounded):
    rows = _rows(grounded / "grounding.csv")
    assert [(int(r["turn"]), r["kind"], r["subject"], r["verdict"]) for r in rows] == EXPECTED


def test_each_row_holds_the_think_its_span_and_the_truth_in_words(grounded):
    rows = _rows(grounded / "grounding.csv")
    hidden = next(r for r in rows if r["claim"] == "I see a red ball straight ahead")
    assert hidden["think"].startswith("I see a green ball 27 degrees to the right")
    assert hidden["claim"] in hidden["think"]
    assert hidden["truth"].startswith("red ball at +0 deg, 14.0 m, hidden")
    green = rows[0]
    assert green["truth"].startswith("green ball at +27 deg, 11.2 m, visible")
    trend = next(r for r in rows if r["kind"] == "health_trend")
    assert trend["truth"].startswith("health fell from 99.76 to ")
    assert {r["episode"] for r in rows} == {"01-04-03_t1"}


def test_the_failed_episode_is_classed_as_a_perception_failure(grounded):
    (episode,) = _rows(grounded / "grounding_episodes.csv")
    assert episode["passed"] == "false"
    assert episode["failure"] == "perception"
    assert episode["first_false_turn"] == "1"
    assert episode["first_false_claim"] == "I see a red ball straight ahead"


def test_the_command_prints_the_share_of_true_claims_per_kind(claims_run, tmp_path, capsys):
    run = tmp_path / "claims"
    shutil.copytree(claims_run, run)
    assert main([str(run)]) == 0
    out = capsys.readouterr().out
    assert "28 claims in 1 episodes" in out
    assert "  seen               4/8 0.50 " in out
    assert "(+1 unverifiable)" in out
    assert "  health_comparison  1/2 0.50 " in out
    assert "failed episodes: 1 of 1: perception 1" in out


def test_a_run_whose_log_was_altered_is_not_grounded(claims_run, tmp_path, capsys):
    run = tmp_path / "claims"
    shutil.copytree(claims_run, run)
    turns = run / "episodes" / "01-04-03_t1" / "turns.jsonl"
    turns.write_text(turns.read_text().replace('"health":88.24', '"health":77.24', 1))
    with pytest.raises(GroundingError, match="MISMATCH"):
        ground_run(run)
    assert main([str(run)]) == 1
    assert "not grounded: " in capsys.readouterr().err


def test_not_a_run_directory_is_a_one_line_error(tmp_path, capsys):
    assert main([str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"error: {tmp_path}: not a run directory (no manifest.json)"
    assert llm_aai_command(["grounding", str(tmp_path)]) == 2  # the installed llm-aai too
    assert capsys.readouterr().err.strip() == err


def test_the_heuristic_agents_own_thinks_are_judged_mostly_true(testbed_dir, tmp_path):
    run = tmp_path / "golden"
    shutil.copytree(GOLDEN, run)
    grounded = ground_run(run, arenas_dir=testbed_dir)
    rows = [row for g in grounded for row in (c.row() for c in g.claims)]
    reached = [r for r in rows if r["episode"] == "06-09-01_t1" and r["turn"] == "7"]
    # "A green ball is at -3 degrees, about 7.7 m away": it was at -3 deg, 7.4 m
    assert [(r["kind"], r["verdict"]) for r in reached] == [
        ("seen", "true"), ("bearing", "true"), ("distance", "true")]
    assert "7.4 m, visible" in reached[0]["truth"]
    true = sum(r["verdict"] == "true" for r in rows)
    assert true / len(rows) > 0.6
    # what it missed is real: a green ball 42 m away that the 128 px frame barely shows
    missed = next(r for r in rows if r["verdict"] == "false")
    assert missed["kind"] == "not_seen" and "green ball at " in missed["truth"]
    assert missed["truth"].endswith("m, visible")
