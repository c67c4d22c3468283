"""Resuming a run whose result file was damaged on disk: the episode is set aside and replayed."""

from __future__ import annotations

import dataclasses
import errno
import json
import shutil
from pathlib import Path

import pytest

from llm_aai.cli import run as run_cli
from llm_aai.logs import RunStore
from llm_aai.logs import store as store_module
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


def two_trials(testbed_dir, tmp_path):
    config = RunConfig(model="heuristic", tasks="01-04-03", trials=2, arenas_dir=testbed_dir,
                       resolution=64, protocol=dataclasses.replace(PAPER_PROTOCOL, max_scripts=1))
    return start_run(config, out=tmp_path, run_id="r", show_progress=False).run_dir


def resume_cli(run_dir, capsys) -> tuple[int, str]:
    capsys.readouterr()
    code = run_cli.main(["--resume", str(run_dir), "--no-progress"])
    return code, capsys.readouterr().err


def test_an_unreadable_result_in_a_set_aside_attempt_does_not_block_resume(testbed_dir, tmp_path,
                                                                             capsys):
    run_dir = two_trials(testbed_dir, tmp_path)
    attempt = run_dir / "episodes" / "01-04-03_t2.attempt-1"
    attempt.mkdir()
    (attempt / "result.json").write_bytes(b'{"episode_id": "01-04-03_t2", "pas')
    (run_dir / "episodes" / "01-04-03_t2" / "result.json").unlink()  # to be played again

    code, err = resume_cli(run_dir, capsys)

    assert code == 0, err
    assert f"warning: {attempt / 'result.json'}:" in err and "Traceback" not in err
    assert (attempt / "result.json.corrupt").read_bytes() == b'{"episode_id": "01-04-03_t2", "pas'
    assert set(RunStore(run_dir).finished_results()) == {"01-04-03_t1", "01-04-03_t2"}


DEEP = b"[" * 100_000 + b"]" * 100_000
"""JSON nested 100,000 deep: json.loads raises RecursionError, not a JSONDecodeError."""


@pytest.mark.parametrize("damage, why", [
    ("folder", "a folder, not a result file"),
    ("deep", "JSON nested too deep to read"),
    ("other", "holds the result of episode '01-04-03_t1', not of '01-04-03_t2'"),
])
def test_a_damaged_result_file_is_set_aside_naming_it(testbed_dir, tmp_path, capsys, damage, why):
    run_dir = two_trials(testbed_dir, tmp_path)
    episodes = run_dir / "episodes"
    result = episodes / "01-04-03_t2" / "result.json"
    result.unlink()
    if damage == "folder":
        result.mkdir()
    elif damage == "deep":
        result.write_bytes(DEEP)
    else:  # a copy of another episode's result, as a hand copy leaves it
        result.write_bytes((episodes / "01-04-03_t1" / "result.json").read_bytes())

    code, err = resume_cli(run_dir, capsys)

    assert code == 0, err
    assert f"warning: {result}: {why}" in err and "Traceback" not in err
    assert (episodes / "01-04-03_t2.attempt-1" / "result.json.corrupt").exists()
    assert set(RunStore(run_dir).finished_results()) == {"01-04-03_t1", "01-04-03_t2"}


@pytest.mark.parametrize("damage, what", [("symlink", "a symbolic link"), ("file", "a file")])
def test_an_episode_entry_that_is_no_folder_is_one_line_naming_it(testbed_dir, tmp_path, capsys,
                                                                   damage, what):
    run_dir = two_trials(testbed_dir, tmp_path)
    episode = run_dir / "episodes" / "01-04-03_t2"
    shutil.rmtree(episode)
    if damage == "symlink":  # an unfinished episode folder linked from elsewhere
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        (elsewhere / "turns.jsonl").write_text("")
        episode.symlink_to(elsewhere, target_is_directory=True)
    else:
        episode.write_text("notes")

    code, err = resume_cli(run_dir, capsys)

    assert code == 2 and err.count("\n") == 1, err
    assert f"{episode} is {what}, not an episode folder" in err
    assert episode.is_symlink() if damage == "symlink" else episode.read_text() == "notes"


def test_a_manifest_nested_too_deep_is_one_line_naming_it(testbed_dir, tmp_path, capsys):
    run_dir = two_trials(testbed_dir, tmp_path)
    (run_dir / "manifest.json").write_bytes(DEEP)
    code, err = resume_cli(run_dir, capsys)
    assert code == 2 and err.count("\n") == 1, err
    assert f"{run_dir / 'manifest.json'}: unreadable manifest: JSON nested too deep" in err


@pytest.mark.parametrize("where, error", [
    # a full disk when the summary is brought up to date after the first episode
    ("summary", OSError(errno.ENOSPC, "No space left on device")),
    # a read-only run folder when an episode starts (in a worker thread)
    ("episode", OSError(errno.EROFS, "Read-only file system")),
])
def test_a_run_that_cannot_write_stops_in_one_line_and_resumes(testbed_dir, tmp_path, capsys,
                                                               monkeypatch, where, error):
    """Injected in-process: CI runs as root, whom a read-only folder does not stop."""
    original_write = store_module.atomic_write_text

    def full_disk(path, text):
        if path.name == "summary.csv":
            raise OSError(error.errno, error.strerror, str(path))
        original_write(path, text)

    def read_only(self, episode_id):
        raise OSError(error.errno, error.strerror, str(self.episodes_dir / episode_id))

    if where == "summary":
        monkeypatch.setattr(store_module, "atomic_write_text", full_disk)
    else:
        monkeypatch.setattr(RunStore, "start_episode", read_only)
    argv = ["--model", "heuristic", "--tasks", "01-04-03", "--trials", "2", "--arenas-dir",
            str(testbed_dir), "--out", str(tmp_path), "--run-id", "r", "--resolution", "64",
            "--max-scripts", "1", "--no-progress"]
    code = run_cli.main(argv)
    err = capsys.readouterr().err
    run_dir = tmp_path / "r"
    assert code == 2 and "Traceback" not in err, err
    last = err.splitlines()[-1]  # after the line naming the model: the error, in one line
    assert last.startswith(f"error: cannot write the run: {run_dir}/"), err
    assert error.strerror in last
    assert f"continue with --resume {run_dir}" in last
    sealed = RunStore(run_dir).finished_results()  # what was sealed stays whole
    assert len(sealed) == (1 if where == "summary" else 0)

    monkeypatch.undo()
    code, err = resume_cli(run_dir, capsys)
    assert code == 0, err
    assert set(RunStore(run_dir).finished_results()) == {"01-04-03_t1", "01-04-03_t2"}


class _Killed(BaseException):
    """A kill between two steps, as a signal would end the process there."""


def test_a_resume_stopped_while_setting_a_damaged_result_aside_loses_nothing(
        testbed_dir, tmp_path, monkeypatch):
    config = RunConfig(model="heuristic", tasks="01-04-03", trials=2, arenas_dir=testbed_dir,
                       resolution=64, protocol=dataclasses.replace(PAPER_PROTOCOL, max_scripts=1))
    run_dir = start_run(config, out=tmp_path, run_id="r", show_progress=False).run_dir
    episode = run_dir / "episodes" / "01-04-03_t2"
    damage = b'{"episode_id": "01-04-03_t2", "pas'
    (episode / "result.json").write_bytes(damage)
    renames = []
    original = Path.rename

    def rename_then_die(self, target):
        if "01-04-03_t2" in str(self):
            renames.append((self, target))
            if len(renames) == 2:  # setting aside takes two renames: stop between them
                raise _Killed
        return original(self, target)

    monkeypatch.setattr(Path, "rename", rename_then_die)
    with pytest.raises(_Killed):
        resume_run(run_dir, show_progress=False)
    monkeypatch.setattr(Path, "rename", original)

    resumed = resume_run(run_dir, show_progress=False)

    assert [r.episode_id for r in resumed.results] == ["01-04-03_t2"]
    kept = run_dir / "episodes" / "01-04-03_t2.attempt-1"
    assert (kept / "result.json.corrupt").read_bytes() == damage
    assert json.loads((episode / "result.json").read_text())["episode_id"] == "01-04-03_t2"
