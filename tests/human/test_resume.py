"""A participant's run is continued in the browser: ``run --resume`` refuses it, ``analyze``
says how to continue it, and the served study does continue it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from llm_aai.cli import analyze
from llm_aai.cli.run import main as run_main
from llm_aai.runner import RunError
from llm_aai.runner.app import resume_run
from tests.human.conftest import SCRIPTS_0403, served, start

TASKS = "01-04-03,01-06-02"


def _snapshot(run_dir):
    return {path.relative_to(run_dir): (path.stat().st_size, path.stat().st_mtime_ns)
            for path in run_dir.rglob("*")}


@pytest.fixture(scope="module")
def left(testbed_dir, tmp_path_factory):
    """A participant's run: level 1 passed, level 2 left in play when the server stopped."""
    out = tmp_path_factory.mktemp("left")
    with served(out, testbed_dir, TASKS) as running, running.client() as client:
        start(client, "p07")
        for script in SCRIPTS_0403:
            client.post("/api/script", json={"script": script})
        assert client.post("/api/next").json()["level"] == 2
        assert client.post("/api/script", json={"script": "Go(1);"}).status_code == 200
    return out / "human-script-p07"


def test_run_resume_refuses_a_browser_run_before_touching_it(left, capsys):
    before = _snapshot(left)
    assert run_main(["--resume", str(left)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ")
    assert "played in the browser by participant 'p07'" in err
    assert "python -m llm_aai.human serve" in err and f"--out {left.parent}" in err
    assert "your script>" not in err
    assert _snapshot(left) == before  # no lock taken, nothing set aside or replaced
    with pytest.raises(RunError, match="--resume does not continue it"):
        resume_run(left)  # the library refuses it too
    assert _snapshot(left) == before


def test_analyze_says_to_continue_a_browser_run_in_the_browser(left, capsys):
    assert analyze.main([str(left)]) == 0
    out = capsys.readouterr()
    text = out.out + out.err
    assert "1 unfinished episode(s) ignored" in text
    assert "--resume" not in text
    assert "participant p07 enter their id" in text


def test_the_served_study_continues_the_run_and_keeps_the_reply_left(left, testbed_dir,
                                                                     tmp_path):
    left = Path(shutil.copytree(left, tmp_path / left.name))  # the other tests' stays as it is
    with served(left.parent, testbed_dir, TASKS) as running, running.client() as client:
        view = start(client, "p07")
        assert view["level"] == 2 and view["replies"] == 0  # level 1 stays as it was sealed
        assert client.post("/api/script", json={"script": "Turn(5);"}).status_code == 200
    kept = (left / "episodes" / "01-06-02_t1.attempt-1" / "turns.jsonl").read_text()
    assert '"Go(1);"' in kept and '"Turn(5);"' not in kept
    assert (left / "episodes" / "01-04-03_t1" / "result.json").is_file()
