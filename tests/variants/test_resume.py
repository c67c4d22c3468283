"""An interrupted ``variants make`` resumes: killed for real, rerun, the same folder as one run."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest

from llm_aai.cli.variants import main as make
from llm_aai.variants.generate import PROGRESS_FILE
from llm_aai.variants.index import INDEX_FILE, read_rows
from tests.helpers.signals import alive, children_of, start_module, stop

TASKS = ["01-04-03", "01-05-01", "01-06-02", "02-03-01", "01-03-02"]
FLAGS = ["--count", "1", "--seed", "5", "--workers", "2"]


def files_of(folder: Path) -> dict[str, bytes]:
    """Every file of a folder (hidden ones too) and its bytes."""
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


@pytest.fixture(scope="module")
def uninterrupted(testbed_dir, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("resume") / "whole"
    assert make(["make", *TASKS, *FLAGS, "--out", str(out), "--arenas-dir",
                 str(testbed_dir)]) == 0
    return out


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_killed_make_resumes_to_what_one_run_makes(signum, uninterrupted, testbed_dir,
                                                     tmp_path, capsys):
    out = tmp_path / "killed"
    process = start_module("llm_aai.variants", "make", *TASKS, *FLAGS, "--out", out,
                           "--arenas-dir", testbed_dir)
    first = process.stdout.readline()  # the first task finished: its rows are in the index
    assert "kept" in first
    workers = children_of(process.pid)
    stdout, stderr = stop(process, signum, timeout=60)
    assert process.returncode == 130, stderr
    assert "Run the same command again" in stderr
    finished = {row["parent"] for row in read_rows(out)}
    assert 1 <= len(finished) < len(TASKS)  # stopped part way, the finished tasks kept
    deadline = time.monotonic() + 5
    while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert workers and not any(alive(pid) for pid in workers)  # no worker writes on
    capsys.readouterr()
    assert make(["make", *TASKS, *FLAGS, "--out", str(out), "--arenas-dir",
                 str(testbed_dir)]) == 0
    printed = capsys.readouterr().out
    assert f"resumed: {len(finished)} of {len(TASKS)} tasks" in printed
    for task in finished:  # only the rest were made again
        assert not any(line.startswith(task) for line in printed.splitlines())
    assert files_of(out) == files_of(uninterrupted)


@pytest.mark.parametrize("change, message", [
    (["--count", "2"], "--count 1 (now 2)"),
    (["--seed", "6"], "--seed 5 (now 6)"),
    (["--heuristic-seeds", "5"], "validation heuristic_seeds 3 (now 5)"),
])
def test_another_request_into_a_made_folder_is_refused_untouched(change, message,
                                                                 uninterrupted, testbed_dir,
                                                                 capsys):
    before = files_of(uninterrupted)
    flags = dict(zip(FLAGS[::2], FLAGS[1::2], strict=True)) | dict([change])
    argv = ["make", *TASKS, *(x for pair in flags.items() for x in pair)]
    assert make([*argv, "--out", str(uninterrupted), "--arenas-dir", str(testbed_dir)]) == 2
    err = capsys.readouterr().err
    assert "holds variants made for another request" in err and message in err
    assert err.count("\n") == 1
    assert files_of(uninterrupted) == before


def test_other_tasks_or_other_task_files_are_refused(uninterrupted, testbed_dir, tmp_path,
                                                      capsys):
    before = files_of(uninterrupted)
    assert make(["make", *TASKS[:2], *FLAGS, "--out", str(uninterrupted), "--arenas-dir",
                 str(testbed_dir)]) == 2
    assert "other tasks (5 then, 2 now; not asked now: 01-03-02, 01-06-02, 02-03-01)" \
        in capsys.readouterr().err
    arenas = tmp_path / "arenas"
    arenas.mkdir()
    for task in TASKS:
        text = (testbed_dir / f"{task}.yaml").read_text()
        arenas.joinpath(f"{task}.yaml").write_text(text + ("\n" if task == TASKS[0] else ""))
    assert make(["make", *TASKS, *FLAGS, "--out", str(uninterrupted), "--arenas-dir",
                 str(arenas)]) == 2
    assert f"other files for {TASKS[0]} (their sha256 differ)" in capsys.readouterr().err
    assert files_of(uninterrupted) == before


def test_a_folder_without_its_request_is_not_resumed(uninterrupted, testbed_dir, tmp_path,
                                                      capsys):
    old = tmp_path / "old"
    old.mkdir()
    (old / INDEX_FILE).write_bytes((uninterrupted / INDEX_FILE).read_bytes())
    assert make(["make", *TASKS, *FLAGS, "--out", str(old), "--arenas-dir",
                 str(testbed_dir)]) == 2
    assert f"no {PROGRESS_FILE} to resume from" in capsys.readouterr().err
    assert sorted(p.name for p in old.iterdir()) == [INDEX_FILE]
    (old / PROGRESS_FILE).write_text("{not json", encoding="utf-8")
    assert make(["make", *TASKS, *FLAGS, "--out", str(old), "--arenas-dir",
                 str(testbed_dir)]) == 2
    assert f"{PROGRESS_FILE}: unreadable" in capsys.readouterr().err
    recorded = json.loads((uninterrupted / PROGRESS_FILE).read_text())
    assert sorted(recorded["request"]["tasks"]) == sorted(TASKS)
