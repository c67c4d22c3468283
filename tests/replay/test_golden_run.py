"""A run recorded before the protocol was rewritten still replays exactly (issue 21).

``tests/data/golden_run/heuristic-2-tasks`` was made on main before the episode protocol moved
into ``llm_aai.protocol`` (how: ``tests/data/golden_run/README.md``). 01-04-03 uses all 30
scripts and then runs out the clock; 06-09-01 (level 6) reaches its goal in script 7. Both
checks below must hold for any change that claims not to alter behaviour: the logged actions
re-simulate to the bit, and the runner, given the same settings, plays the same episodes.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from llm_aai.cli.run import main as run_main
from llm_aai.replay import load_episode, resimulate

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden_run" / "heuristic-2-tasks"
EPISODES = ("01-04-03_t1", "06-09-01_t1")


def _turns(path: Path) -> list[dict]:
    """The turn records without wall-clock latency (the heuristic's is always 0, but say so)."""
    records = [json.loads(line) for line in path.read_text().splitlines()]
    for record in records:
        record["usage"].pop("latency_s", None)
    return records


@pytest.mark.parametrize("episode_id", EPISODES)
def test_the_golden_run_resimulates_as_a_match(episode_id, testbed_dir):
    episode = load_episode(GOLDEN / "episodes" / episode_id)
    report = resimulate(episode, arenas_dir=testbed_dir)
    assert report.ok, report.render()
    assert report.verdict().startswith("verdict: MATCH")
    assert report.steps == episode.result.steps


def test_the_golden_run_covers_the_script_cap_the_run_out_and_a_goal():
    capped = load_episode(GOLDEN / "episodes" / "01-04-03_t1")
    assert capped.result.scripts_used == 30 and capped.turns[-1].reply is None
    assert capped.turns[-1].steps > 0  # the clock was run out after the 30th script
    reached = load_episode(GOLDEN / "episodes" / "06-09-01_t1")
    assert reached.result.end_reason == "good_goal" and reached.result.passed


def test_a_fresh_run_with_the_golden_settings_logs_the_same_episodes(testbed_dir, tmp_path):
    argv = ["--model", "heuristic", "--tasks", "01-04-03,06-09-01", "--trials", "1",
            "--resolution", "128", "--arenas-dir", str(testbed_dir), "--out", str(tmp_path),
            "--run-id", "again", "--no-progress"]
    assert run_main(argv) == 0
    for episode_id in EPISODES:
        golden = GOLDEN / "episodes" / episode_id
        fresh = tmp_path / "again" / "episodes" / episode_id
        assert _turns(fresh / "turns.jsonl") == _turns(golden / "turns.jsonl"), episode_id
        frames = sorted(p.name for p in (golden / "frames").iterdir())
        assert sorted(p.name for p in (fresh / "frames").iterdir()) == frames
        for name in frames:
            assert (fresh / "frames" / name).read_bytes() == (golden / "frames" / name).read_bytes()
        result = json.loads((fresh / "result.json").read_text())
        expected = json.loads((golden / "result.json").read_text())
        result.pop("duration_s"), expected.pop("duration_s")
        assert (result.pop("node_id"), result.pop("host")) == ("local", socket.gethostname())
        assert result == expected  # the golden run's results predate where-it-ran (#36)
