"""Resuming a run whose result file was damaged on disk: the episode is set aside and replayed."""

from __future__ import annotations

import dataclasses
import json

import pytest

from llm_aai.logs import RunStore
from llm_aai.protocol import PAPER_PROTOCOL
from llm_aai.runner import RunConfig, resume_run, start_run


@pytest.mark.parametrize("damage", [b'{"episode_id": "01-04-03_t2", "pas', b"\xff\xfe\x00garbage",
                                    b'{"episode_id": 3}'])
def test_resume_sets_aside_an_unreadable_result_and_plays_the_episode_again(
        testbed_dir, tmp_path, capsys, damage):
    config = RunConfig(model="heuristic", tasks="01-04-03", trials=2, arenas_dir=testbed_dir,
                       resolution=64, protocol=dataclasses.replace(PAPER_PROTOCOL, max_scripts=1))
    run_dir = start_run(config, out=tmp_path, run_id="r", show_progress=False).run_dir
    episode = run_dir / "episodes" / "01-04-03_t2"
    (episode / "result.json").write_bytes(damage)
    capsys.readouterr()

    resumed = resume_run(run_dir, show_progress=False)

    err = capsys.readouterr().err
    assert f"{episode / 'result.json'}:" in err and "set aside as" in err
    assert [r.episode_id for r in resumed.results] == ["01-04-03_t2"]
    kept = run_dir / "episodes" / "01-04-03_t2.attempt-1"
    assert (kept / "result.json.corrupt").read_bytes() == damage  # kept, renamed
    assert (kept / "turns.jsonl").is_file()
    store = RunStore(run_dir)
    assert set(store.finished_results()) == {"01-04-03_t1", "01-04-03_t2"}
    rows = (run_dir / "summary.csv").read_text().splitlines()
    assert len(rows) == 3
    assert json.loads((episode / "result.json").read_text())["episode_id"] == "01-04-03_t2"


def test_resume_removes_the_temporary_files_a_kill_left(testbed_dir, tmp_path):
    # a kill -9 between atomic_write_text's temporary file and its rename leaves the file
    config = RunConfig(model="heuristic", tasks="01-04-03", trials=1, arenas_dir=testbed_dir,
                       resolution=64, protocol=dataclasses.replace(PAPER_PROTOCOL, max_scripts=1))
    run_dir = start_run(config, out=tmp_path, run_id="r", show_progress=False).run_dir
    stale = [run_dir / ".summary.csv.0123456789abcdef.tmp",
             run_dir / ".manifest.json.fedcba9876543210.tmp",
             run_dir / "episodes" / "01-04-03_t1" / ".result.json.00112233aabbccdd.tmp"]
    for path in stale:
        path.write_text("half a fi")
    mine = run_dir / "notes.tmp"  # not a name the writer gives: left alone
    mine.write_text("mine")

    resume_run(run_dir, show_progress=False)

    assert [path for path in stale if path.exists()] == []
    assert mine.read_text() == "mine"
    assert (run_dir / "summary.csv").read_text().count("\n") == 2
