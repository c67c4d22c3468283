"""The commands printed after a run name the interpreter that ran it, not a bare ``python``."""

import os
import subprocess
import sys

from llm_aai.cli import run as run_cli
from llm_aai.cli.hints import module_command, python_command


def test_the_interpreter_is_shown_relative_inside_the_current_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "executable", str(tmp_path / ".venv" / "bin" / "python"))
    assert python_command() == ".venv/bin/python"
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    assert python_command() == "./python"
    monkeypatch.setattr(sys, "executable", "/opt/my python/bin/python3")
    assert python_command() == "'/opt/my python/bin/python3'"
    assert module_command("llm_aai.analyze", "runs/a b", "--plot", "x.png") == (
        "'/opt/my python/bin/python3' -m llm_aai.analyze 'runs/a b' --plot x.png")


def test_the_demo_figure_hint_runs_with_the_python_it_names(testbed_dir, tmp_path, monkeypatch,
                                                           capsys):
    monkeypatch.chdir(tmp_path)
    argv = ["--model", "heuristic", "--tasks", "01-04-03", "--arenas-dir", str(testbed_dir),
            "--out", "results", "--run-id", "demo", "--no-progress"]
    assert run_cli.main(argv) == 0
    hint = [line for line in capsys.readouterr().out.splitlines()
            if line.startswith("figure: ")]
    expected = f"{python_command()} -m llm_aai.analyze results/demo --plot"
    assert hint == [f"figure: {expected}  # writes results/demo/pass-rates.png"]
    # the hint works as printed, from a shell whose PATH has no python of the venv
    done = subprocess.run(expected, shell=True, cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "PATH": "/usr/bin:/bin"}, timeout=300)
    assert done.returncode == 0, done.stderr
    # into the run's folder, not the working folder (a clone's, where git status shows it)
    assert (tmp_path / "results" / "demo" / "pass-rates.png").stat().st_size > 0
    assert sorted(path.name for path in tmp_path.iterdir()) == ["results"]
