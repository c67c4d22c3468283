"""--model replay refuses to re-issue a logged episode's scripts in a different arena."""

from __future__ import annotations

from llm_aai.cli.run import main as run_main


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
