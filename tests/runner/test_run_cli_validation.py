"""Bad command lines: each is a one-line error with exit 2, and nothing is written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from llm_aai.cli import run as run_cli
from llm_aai.runner import RunConfig, start_run
from llm_aai.runner.app import RunError
from llm_aai.runner.config import ConfigError, ModelOptions
from llm_aai.settings import read_settings
from llm_aai.settings.config import default_run_id


def files_under(root: Path) -> list[Path]:
    return sorted(root.rglob("*")) if root.exists() else []


def run_main(argv, capsys) -> tuple[int, str]:
    code = run_cli.main([str(a) for a in argv])
    return code, capsys.readouterr().err


def heuristic(testbed_dir, out):
    return ["--model", "heuristic", "--tasks", "01-04-03", "--arenas-dir", testbed_dir,
            "--out", out, "--resolution", 64, "--max-scripts", 1, "--no-progress"]


@pytest.mark.parametrize("extra, message", [
    (["--resolution", 2000], "--resolution must be at least 64 and at most 1024, not 2000"),
    (["--timeout", "inf"], "--timeout must be a finite number, not inf"),
    (["--relaunch-delay", -5], "--relaunch-delay must be at least 0, not -5"),
    (["--relaunch-delay", "nan"], "--relaunch-delay must be a finite number, not nan"),
    (["--max-tokens", -1], "--max-tokens must be at least 1, not -1"),
    (["--temperature", "nan"], "--temperature must be a finite number"),
    (["--budget-usd", "inf"], "--budget-usd must be a finite number"),
    (["--api-base", "not a url"], "--api-base must be an http:// or https:// URL with a host"),
    (["--api-base", "http://"], "--api-base must be an http:// or https:// URL"),
    (["--api-base", "http://localhost:port"], "--api-base must be an http:// or https:// URL"),
    (["--run-id", "../x"], "run id '../x' must be a single folder name"),
    (["--run-id", "a/b"], "run id 'a/b' must be a single folder name"),
    (["--run-id", "bad\nid\x1b[2J"], r"run id 'bad\nid\x1b[2J' holds a control character"),
    (["--run-id", "tab\there"], "holds a control character"),
    # a folder name holds 255 bytes: 300 characters was an OSError traceback
    (["--run-id", "x" * 300], "(--run-id) is 300 bytes long in UTF-8 (300 characters)"),
    (["--run-id", "x" * 201], "is 201 bytes long in UTF-8 (201 characters); at most 200 bytes"),
    (["--run-id", "é" * 101], "(--run-id) is 202 bytes long in UTF-8 (101 characters)"),
    (["--run-id", "日" * 86], "(--run-id) is 258 bytes long in UTF-8 (86 characters)"),
    (["--run-id", "🐀" * 64], "(--run-id) is 256 bytes long in UTF-8 (64 characters)"),
    # counts that size the run before it plays: 10,000,000 trials wrote a 386 MB manifest
    (["--trials", 10_000_000], "--trials must be at least 1 and at most 1000, not 10000000"),
    (["--concurrency", 100_000], "--concurrency must be at least 1 and at most 256"),
    (["--max-relaunches", 10**9], "--max-relaunches must be at least 0 and at most 100"),
    (["--max-scripts", 10**9], "--max-scripts must be at least 1 and at most 100000"),
])
def test_a_bad_value_is_one_line_and_writes_nothing(testbed_dir, tmp_path, capsys, extra,
                                                    message):
    out = tmp_path / "out"
    code, err = run_main(heuristic(testbed_dir, out) + extra, capsys)
    assert code == 2
    assert message in err and err.count("\n") == 1, err
    assert files_under(tmp_path) == []  # not even the --out folder, nor ../x beside it


def test_a_run_id_of_the_longest_length_is_stored(testbed_dir, tmp_path, capsys):
    """200 bytes (multi-byte characters) fits, staged first as .<id>.<hex>.creating."""
    out, run_id = tmp_path / "out", "日" * 66 + "ab"
    assert len(run_id.encode()) == 200
    code, err = run_main(heuristic(testbed_dir, out) + ["--run-id", run_id], capsys)
    assert code == 0, err
    assert (out / run_id / "manifest.json").is_file()


def test_a_long_model_name_makes_a_default_run_id_that_fits():
    run_id = default_run_id("openai/" + "日" * 300)
    assert len(run_id.encode()) <= 200  # the run id check's limit
    assert run_id.split("_", 1)[1] == "openai-" + "日" * 47  # 150 bytes, whole characters


def test_out_below_a_file_is_refused(testbed_dir, tmp_path, capsys):
    readme = tmp_path / "README.md"
    readme.write_text("notes")
    code, err = run_main(heuristic(testbed_dir, readme / "sub"), capsys)
    assert code == 2 and err.count("\n") == 1
    assert f"{readme} is a file, not a folder" in err
    assert files_under(tmp_path) == [readme] and readme.read_text() == "notes"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_out_in_a_read_only_folder_is_refused(testbed_dir, tmp_path, capsys):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        code, err = run_main(heuristic(testbed_dir, locked / "runs"), capsys)
    finally:
        locked.chmod(0o700)
    assert code == 2 and err.count("\n") == 1
    assert f"{locked} is not writable" in err
    assert files_under(locked) == []


def test_replay_from_a_missing_directory_is_refused_before_a_run_exists(testbed_dir, tmp_path,
                                                                       capsys):
    out = tmp_path / "out"
    argv = heuristic(testbed_dir, out)
    argv[1] = "replay"
    code, err = run_main(argv + ["--replay-from", tmp_path / "nowhere"], capsys)
    assert code == 2 and err.count("\n") == 1
    assert f"--replay-from {tmp_path / 'nowhere'}: no such episode directory" in err
    assert files_under(tmp_path) == []


def test_the_library_refuses_the_same_values_naming_the_field(tmp_path):
    with pytest.raises(ConfigError, match="timeout_s must be a finite number"):
        ModelOptions(timeout_s=float("inf"))
    with pytest.raises(ConfigError, match="resolution must be at least 64 and at most 1024"):
        RunConfig(model="heuristic", resolution=2000)
    with pytest.raises(RunError, match="must be a single folder name"):
        start_run(RunConfig(model="heuristic"), out=tmp_path, run_id="..")
    assert files_under(tmp_path) == []


def test_argparse_errors_are_one_line_too(tmp_path):
    result = subprocess.run([sys.executable, "-m", "llm_aai.run", "--model", "heuristic",
                             "--trials", "zero", "--out", tmp_path],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "--trials: 'zero' is not an integer" in result.stderr
    assert files_under(tmp_path) == []


def test_out_where_no_folder_can_be_made_is_refused(testbed_dir, capsys):
    code, err = run_main(heuristic(testbed_dir, "/proc/llm-aai-runs"), capsys)
    assert code == 2 and err.count("\n") == 1
    assert "cannot" in err and "/proc" in err
    assert not Path("/proc/llm-aai-runs").exists()


@pytest.fixture(scope="module")
def two_task_run(testbed_dir, tmp_path_factory) -> Path:
    """A finished heuristic run started with ``--tasks 01-04-03,02-10-01``."""
    from tests.helpers.runs import make_run

    return make_run(testbed_dir, tmp_path_factory.mktemp("resume-selection"), "r",
                    "--model", "heuristic", "--tasks", "01-04-03,02-10-01",
                    "--max-scripts", "1")


@pytest.mark.parametrize("selection", [["--tasks", "02-10-01,01-04-03"],
                                       ["--tasks", "01-04-03, 02-10-01"],
                                       ["--level", "1-2", "--tasks", "02-10-01,01-04-03"],
                                       ["--full-testbed", "--tasks", "01-04-03,02-10-01"]])
def test_resume_takes_the_same_tasks_however_they_are_chosen(two_task_run, selection, capsys):
    code = run_cli.main(["--resume", str(two_task_run), *selection, "--no-progress"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "nothing left to run: all 2 episodes" in captured.out


@pytest.mark.parametrize("selection, message", [
    (["--level", "3"], "--level 3 (the run has no --level; it was started with "
                       "--tasks 01-04-03,02-10-01)"),
    (["--tasks", "02-10-01"], "--tasks 02-10-01 (the run was started with "
                              "--tasks 01-04-03,02-10-01)"),
    (["--tasks", "02-10-1"], "--tasks: bad task id '02-10-1'"),
    # the flags given are the whole selection, not merged with the run's --tasks
    (["--level", "1-2"], "--level 1-2 (the run has no --level; it was started with "
                         "--tasks 01-04-03,02-10-01)"),
    (["--full-testbed"], "--full-testbed (the run has no --full-testbed; it was started with "
                         "--tasks 01-04-03,02-10-01)"),
])
def test_resume_says_how_another_selection_differs(two_task_run, selection, message, capsys):
    code, err = run_main(["--resume", two_task_run, *selection], capsys)
    assert code == 2 and message in err and err.count("\n") == 1
    assert "None" not in err


@pytest.mark.parametrize("model", ["heuristic", "random", "openai/fake"])
def test_replay_from_with_an_agent_that_does_not_replay_is_refused(model, two_task_run,
                                                                   testbed_dir, tmp_path, capsys):
    argv = heuristic(testbed_dir, tmp_path / "out")
    argv[1] = model
    episode = two_task_run / "episodes" / "01-04-03_t1"
    with pytest.raises(SystemExit) as exit_:
        run_cli.main([str(a) for a in [*argv, "--replay-from", episode]])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.count("\n") == 1
    assert (f"--replay-from is for --model replay (the scripts it re-issues); --model {model} "
            "does not use it") in err
    assert files_under(tmp_path / "out") == []


@pytest.mark.parametrize("model", ["heuristic", "random", "replay", "openai/fake"])
def test_oracle_budget_with_an_agent_that_does_not_search_is_refused(model, testbed_dir,
                                                                     tmp_path, capsys):
    argv = heuristic(testbed_dir, tmp_path / "out")
    argv[1] = model
    with pytest.raises(SystemExit) as exit_:
        run_cli.main([str(a) for a in [*argv, "--oracle-budget", 500]])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.count("\n") == 1
    assert ("--oracle-budget is for --model oracle or --model oracle-frames (its search "
            f"budget); --model {model} does not use it") in err
    assert files_under(tmp_path / "out") == []


def test_oracle_budget_reaches_the_oracle(testbed_dir, tmp_path):
    argv = heuristic(testbed_dir, tmp_path / "out")
    argv[1] = "oracle"
    assert run_cli.main([str(a) for a in [*argv, "--oracle-budget", 50, "--run-id", "o"]]) == 0
    assert read_settings(tmp_path / "out" / "o").config.oracle_budget == 50


def test_a_mistyped_api_base_host_stops_the_run_at_once(testbed_dir, tmp_path, capsys,
                                                        monkeypatch):
    """A host whose name has no address: one clear error in seconds, not minutes of retries."""
    import time

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    argv = heuristic(testbed_dir, tmp_path / "out")
    argv[1] = "openai/fake"
    started = time.monotonic()
    code, err = run_main([*argv, "--run-id", "r", "--api-base",
                          "http://nonexistent.invalid:1234/v1"], capsys)
    assert time.monotonic() - started < 20
    assert code == 2 and "Traceback" not in err and "retrying" not in err
    assert ("error: the model's host name has no address, so the run stopped: openai/fake: the "
            "host nonexistent.invalid has no address") in err
    assert f"--resume {tmp_path / 'out' / 'r'}" in err
