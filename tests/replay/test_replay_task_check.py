"""--model replay re-issues a logged episode's scripts in its own arena, with its own seed."""

from __future__ import annotations

import json

from llm_aai.cli.run import main as run_main
from llm_aai.logs import read_result


def test_replaying_an_episode_on_another_task_is_refused(runs, testbed_dir, tmp_path, capsys):
    episode = runs["heuristic"] / "episodes" / "01-04-03_t1"
    code = run_main(["--model", "replay", "--replay-from", str(episode), "--tasks", "04-16-01",
                     "--arenas-dir", str(testbed_dir), "--out", str(tmp_path), "--no-progress"])
    assert code == 2
    err = capsys.readouterr().err
    assert "was played on task 01-04-03, but this run selects 04-16-01; add --tasks 01-04-03" in err
    assert not any(tmp_path.iterdir())  # refused before a run directory was made


def test_replaying_an_episode_on_its_own_task_runs(runs):
    assert (runs["replay"] / "episodes" / "01-04-03_t1" / "result.json").is_file()


def test_replaying_a_later_trial_plays_in_the_world_it_was_logged_in(testbed_dir, tmp_path):
    # 09-03-01 places its goals at random: trial 2's scripts mean something only with its seed
    common = ["--tasks", "09-03-01", "--arenas-dir", str(testbed_dir), "--out", str(tmp_path),
              "--resolution", "64", "--max-scripts", "6", "--no-progress"]
    assert run_main(["--model", "random", "--trials", "2", "--run-id", "random", *common]) == 0
    logged = read_result(tmp_path / "random" / "episodes" / "09-03-01_t2")
    first_trial = read_result(tmp_path / "random" / "episodes" / "09-03-01_t1")
    assert logged.seed != first_trial.seed
    source = tmp_path / "random" / "episodes" / "09-03-01_t2"
    assert run_main(["--model", "replay", "--replay-from", str(source), "--run-id", "again",
                     *common]) == 0
    replayed = read_result(tmp_path / "again" / "episodes" / "09-03-01_t1")
    assert replayed.seed == logged.seed
    assert (replayed.reward, replayed.final_health, replayed.steps) == (
        logged.reward, logged.final_health, logged.steps)
    manifest = json.loads((tmp_path / "again" / "manifest.json").read_text())
    assert manifest["seeds"]["episodes"] == {"09-03-01_t1": logged.seed}


def test_a_scripts_file_shorter_than_the_episode_is_a_clear_error(testbed_dir, tmp_path,
                                                                  capsys):
    scripts = tmp_path / "two.txt"
    scripts.write_text("Go(3);\nTurn(90);\n")
    code = run_main(["--model", "replay", "--replay-from", str(scripts), "--tasks", "01-04-03",
                     "--arenas-dir", str(testbed_dir), "--out", str(tmp_path / "out"),
                     "--resolution", "64", "--no-progress"])
    assert code == 2
    err = capsys.readouterr().err
    assert "replay has only 2 scripts but the episode asked for script 3" in err
    assert "python -m llm_aai.play" in err
