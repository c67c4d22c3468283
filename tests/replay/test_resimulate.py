"""Re-simulation reproduces fresh embedded runs exactly and pins down tampered logs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from llm_aai.cli.replay import main
from llm_aai.cli.run import main as run_main
from llm_aai.logs import read_turns
from llm_aai.replay import ReplayInputError, load_episode, resimulate

from .conftest import episode_dirs

KINDS = ("heuristic", "replay", "llm", "human")


def _rewrite_turn(episode_dir: Path, turn: int, change) -> None:
    path = episode_dir / "turns.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    change(next(r for r in records if r["turn"] == turn))
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


@pytest.mark.parametrize("kind", KINDS)
def test_fresh_embedded_runs_resimulate_exactly(runs, kind):
    for directory in episode_dirs(runs[kind]):
        episode = load_episode(directory)
        report = resimulate(episode)
        assert report.ok, report.render()
        assert [row.kind for row in report.turns] == (
            ["start"] + ["script"] * (len(episode.turns) - 1) + ["final", "episode"])
        start = report.turns[0]
        assert [c.name for c in start.checks] == ["steps", "health", "reward", "events",
                                                  "health told", "observations", "frame 0",
                                                  "frame 1", "frame 2"]
        assert report.steps == episode.result.steps
        # the log alone adds up to the result: turn 0 holds the steps before the first script
        logged = (episode.start, *episode.turns)
        assert episode.start.turn == 0 and episode.start.steps == 1 + 3 * 16
        assert sum(t.steps for t in logged) == episode.result.steps
        assert sum(t.reward for t in logged) == pytest.approx(episode.result.reward, abs=1e-6)
        frames = sum(c.name == "frame" for row in report.turns for c in row.checks)
        assert frames >= len(episode.turns) - 1  # only a frame hidden by the run-out is skipped


def test_invalid_replies_and_run_out_are_replayed(runs):
    episode = load_episode(runs["llm"] / "episodes" / "01-04-03_t1")
    assert episode.turns[1].parse_error and episode.turns[1].actions == ((0, 0),)
    final = episode.turns[-1]
    assert final.reply is None and final.steps > 0  # the clock was run out after 3 scripts
    report = resimulate(episode)
    assert report.ok, report.render()
    assert report.turns[-2].steps == final.steps
    assert any("run-out follows" in note for note in report.turns[3].notes)


def test_overviews_do_not_disturb_the_simulation(runs):
    episode = load_episode(runs["heuristic"] / "episodes" / "04-16-01_t1")
    report = resimulate(episode, overview_size=128)
    assert report.ok, report.render()
    keys = [(frame.turn, frame.index) for frame in episode.shown_frames()]
    assert sorted(report.overviews) == sorted(keys)
    assert all(view.shape == (128, 128, 3) for view in report.overviews.values())


def test_an_edited_health_told_at_the_start_is_a_mismatch(runs, copy_run):
    run_dir = copy_run(runs["heuristic"])
    episode_dir = run_dir / "episodes" / "01-04-03_t1"
    _rewrite_turn(episode_dir, 0, lambda r: r.update(health_told=r["health"]))
    report = resimulate(load_episode(episode_dir))
    bad = [row for row in report.turns if not row.ok]
    assert [row.turn for row in bad] == [0]
    assert [c.name for c in bad[0].mismatches] == ["health told"]


def test_edited_health_is_a_mismatch_at_that_turn_only(runs, copy_run, capsys):
    run_dir = copy_run(runs["heuristic"])
    episode_dir = run_dir / "episodes" / "01-04-03_t1"
    _rewrite_turn(episode_dir, 3, lambda r: r.update(health=r["health"] + 0.5))
    report = resimulate(load_episode(episode_dir))
    bad = [row for row in report.turns if not row.ok]
    assert [row.turn for row in bad] == [3]
    assert [c.name for c in bad[0].mismatches] == ["health"]

    assert main([str(episode_dir), "--resimulate"]) == 1
    out = capsys.readouterr().out
    assert "verdict: MISMATCH from turn 3 (health: logged" in out
    rows = [line.split() for line in out.splitlines() if line.startswith("turn ")]
    assert [row[1] for row in rows if "MISMATCH" in row] == ["3"]


def test_edited_action_is_a_mismatch_from_that_turn(runs, copy_run, capsys):
    run_dir = copy_run(runs["heuristic"])
    episode_dir = run_dir / "episodes" / "01-04-03_t1"
    turns = read_turns(episode_dir)
    assert turns[1].actions[0] != (1, 0)
    _rewrite_turn(episode_dir, 2, lambda r: r["actions"].__setitem__(0, [1, 0]))
    report = resimulate(load_episode(episode_dir))
    assert report.first_mismatch.turn == 2
    assert {"position", "frame"} <= {c.name for c in report.first_mismatch.mismatches}
    assert all(row.ok for row in report.turns if 0 <= row.turn < 2)
    assert main([str(episode_dir), "--resimulate"]) == 1
    assert "verdict: MISMATCH from turn 2" in capsys.readouterr().out


def test_wrong_arena_file_is_a_checksum_error(runs, testbed_dir, tmp_path, capsys):
    arenas = tmp_path / "arenas"
    arenas.mkdir()
    original = (testbed_dir / "01-04-03.yaml").read_text()
    (arenas / "01-04-03.yaml").write_text(original.replace("t: 250", "t: 251"))
    assert (arenas / "01-04-03.yaml").read_text() != original
    episode_dir = runs["heuristic"] / "episodes" / "01-04-03_t1"
    with pytest.raises(ReplayInputError, match="sha256 .* differs"):
        resimulate(load_episode(episode_dir), arenas_dir=arenas)
    assert main([str(episode_dir), "--resimulate", "--arenas-dir", str(arenas)]) == 2
    err = capsys.readouterr().err
    assert "01-04-03.yaml: sha256" in err and "not the arena the episode was played in" in err


def test_the_right_arena_elsewhere_is_accepted(runs, testbed_dir, tmp_path):
    arenas = tmp_path / "arenas"
    arenas.mkdir()
    (arenas / "01-04-03.yaml").write_bytes((testbed_dir / "01-04-03.yaml").read_bytes())
    report = resimulate(load_episode(runs["heuristic"] / "episodes" / "01-04-03_t1"),
                        arenas_dir=arenas)
    assert report.ok and report.arena == arenas / "01-04-03.yaml"


def test_unity_runs_and_lone_episodes_cannot_be_resimulated(runs, copy_run, tmp_path, capsys):
    run_dir = copy_run(runs["heuristic"])
    manifest = json.loads((run_dir / "manifest.json").read_text())
    manifest["run"]["config"]["backend"] = "unity"
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    assert main([str(run_dir / "episodes" / "01-04-03_t1"), "--resimulate"]) == 2
    assert "config.backend is 'unity'" in capsys.readouterr().err

    lone = tmp_path / "lone" / "01-04-03_t1"
    lone.parent.mkdir()
    (run_dir / "episodes" / "01-04-03_t1").rename(lone)
    with pytest.raises(ReplayInputError, match="manifest.json not found"):
        resimulate(load_episode(lone))


def test_a_changed_turn_zero_is_reported(runs, copy_run):
    run = copy_run(runs["heuristic"])
    episode_dir = run / "episodes" / "01-04-03_t1"
    _rewrite_turn(episode_dir, 0, lambda record: record.update(health=42.0))
    report = resimulate(load_episode(episode_dir))
    assert not report.ok
    assert report.first_mismatch.kind == "start"
    assert [c.name for c in report.first_mismatch.mismatches] == ["health"]


def test_an_episode_over_before_its_first_script_resimulates(testbed_dir, tmp_path):
    # t=20 ends the episode by time during the initial observations, after all three are drawn
    arenas = tmp_path / "arenas"
    arenas.mkdir()
    text = (testbed_dir / "01-04-03.yaml").read_text()
    (arenas / "01-04-03.yaml").write_text(re.sub(r"\bt: \d+", "t: 20", text, count=1))
    assert run_main(["--model", "heuristic", "--tasks", "01-04-03", "--arenas-dir", str(arenas),
                     "--out", str(tmp_path), "--run-id", "r", "--resolution", "64",
                     "--no-progress"]) == 0
    episode = load_episode(tmp_path / "r" / "episodes" / "01-04-03_t1")
    assert episode.start.terminated and [t.reply for t in episode.turns] == [None]
    report = resimulate(episode, arenas_dir=arenas)
    assert report.ok, report.render()
    assert [c.name for c in report.turns[0].checks][-1] == "ended before the first script"


def test_logged_actions_past_the_episode_s_end_are_a_mismatch(runs, copy_run, capsys):
    run_dir = copy_run(runs["heuristic"])
    episode_dir = run_dir / "episodes" / "01-04-03_t1"
    ending = next(t for t in read_turns(episode_dir) if t.terminated)
    _rewrite_turn(episode_dir, ending.turn, lambda r: r["actions"].extend([[1, 0]] * 5))
    report = resimulate(load_episode(episode_dir))
    assert report.first_mismatch.turn == ending.turn
    assert "actions" in {c.name for c in report.first_mismatch.mismatches}
    assert main([str(episode_dir), "--resimulate"]) == 1
    assert f"verdict: MISMATCH from turn {ending.turn}" in capsys.readouterr().out
