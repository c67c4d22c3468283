"""The README's examples run as written, after the set-up they name.

A newcomer who ran ``make demo`` and then the bridge example met ``No module named
'animalai'``: the example needed ``make animalai``, which the README never named. Each
``bash`` block of the README (but the set-up block itself) is run here command by command, in
a subprocess whose Python can import only what the named set-up installs
(``tests/helpers/setup_guard``), in a fresh working folder holding a heuristic run where the
README says ``results/<run-id>``. The only changes: that placeholder, and ``--dry-run`` added
to a run of a model that needs an API key. Each command must exit 0, and each file it names
(``--out``, ``--plot``, a ``./path`` in its comment, a path it says it wrote or asks to open)
must exist afterwards; a dry run must leave the folder as it was.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from llm_aai.agents.registry import AGENTS
from tests.helpers.readme import (
    Shell,
    examples,
    guarded_env,
    locks_installed_by,
    modules_not_installed_by,
    run_command,
)
from tests.helpers.runs import make_run

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
RUN_ID = "readme-run"
PLACEHOLDER = "<run-id>"
EPISODE = re.compile(r"results/<run-id>/episodes/(\d\d-\d\d-\d\d)_t(\d+)")
ANNOUNCED = re.compile(r"\b(?:wrote|written to|results in|open)\s+(\S+)")

EXAMPLES = [example for example in examples(README) if not example.is_setup]


def needs_a_key(command) -> bool:
    model = command.option("--model")
    return command.module == "llm_aai.run" and model is not None and model not in AGENTS


def files_in(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.stat().st_size for p in folder.rglob("*")}


def named_outputs(command, output: str) -> list[str]:
    """The paths a command names as what it makes: its options, its comment, its output."""
    said = [word for word in command.comment.split() if word.startswith("./")]
    said += [word.rstrip(":,.") for word in ANNOUNCED.findall(output)]
    said = [word for word in said if "/" in word or re.search(r"\.[a-z]{2,5}$", word)]
    given = [command.option(flag) for flag in ("--out", "--plot")]
    return [path for path in given if path] + said


@pytest.fixture(scope="module")
def readme_run(testbed_dir, tmp_path_factory) -> Path:
    """One heuristic run over the tasks of the episodes the README names (01-04-03 if none)."""
    named = [m for e in EXAMPLES for c in e.commands for m in EPISODE.findall(c.text)]
    tasks = sorted({task for task, _ in named} or {"01-04-03"})
    trials = max([int(trial) for _, trial in named] or [1])
    out = tmp_path_factory.mktemp("readme-runs")
    return make_run(testbed_dir, out, RUN_ID, "--model", "heuristic", "--full-testbed",
                    "--tasks", ",".join(tasks), "--trials", str(trials))


def test_the_readme_has_examples_beyond_the_set_up():
    modules = {c.module for e in EXAMPLES for c in e.commands}
    assert {"llm_aai.run", "llm_aai.analyze", "llm_aai.replay", "llm_aai.view",
            "llm_aai.bridge", "llm_aai.play", "llm_aai.arenas"} <= modules
    assert any(e.is_setup for e in examples(README))


def test_each_set_up_step_named_is_a_make_target_that_installs_a_lock():
    for step in {e.setup for e in EXAMPLES}:
        assert locks_installed_by(step, REPO), f"make {step} installs no lock"


def test_the_bridge_example_names_make_animalai():
    bridge = [e for e in EXAMPLES if any(c.module == "llm_aai.bridge" for c in e.commands)]
    assert bridge and all(e.setup == "animalai" for e in bridge)


def test_the_guard_refuses_what_the_step_does_not_install(tmp_path, testbed_dir):
    """The demo's environment has no animalai, grpc or pytest; the runtime imports."""
    assert {"animalai", "grpc", "pytest", "ray", "playwright"} <= modules_not_installed_by(
        "demo", REPO)
    assert "animalai" not in modules_not_installed_by("animalai", REPO)
    env = guarded_env("demo", tmp_path / "guard.json", testbed_dir)
    status, output = run_command("python -c 'import numpy, mujoco, litellm, llm_aai.run'", env,
                                 tmp_path)
    assert status == 0, output
    status, output = run_command("python -c 'import animalai'", env, tmp_path)
    assert status == 1
    assert "No module named 'animalai' (make demo does not install" in output


def test_what_the_examples_write_into_the_checkout_is_ignored_by_git():
    written = {path.removeprefix("./").split("/")[0] for e in EXAMPLES for c in e.commands
               for path in named_outputs(c, "") if not path.startswith("results/")}
    assert written, "the README's examples name no file they write"
    ignored = subprocess.run(["git", "check-ignore", "--no-index", *sorted(written)], cwd=REPO,
                             capture_output=True, text=True).stdout.split()
    assert sorted(written - set(ignored)) == []


def test_what_a_command_leaves_running_lives_until_the_example_ends(tmp_path):
    """A server started with ``&`` serves the next commands, and is stopped afterwards."""
    with Shell(dict(os.environ), tmp_path) as shell:
        assert shell.run("sleep 120 & echo $! > pid")[0] == 0
        pid = int((tmp_path / "pid").read_text())
        assert shell.run(f"kill -0 {pid}") == (0, "")
    deadline = time.monotonic() + 10
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not Path(f"/proc/{pid}").exists()


@pytest.mark.slow
@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: f"README.md:{e.line}")
def test_the_example_runs_as_written(example, readme_run, testbed_dir, tmp_path):
    work = tmp_path / "work"
    shutil.copytree(readme_run, work / "results" / RUN_ID)
    env = guarded_env(example.setup, tmp_path / "guard.json", testbed_dir)
    with Shell(env, work) as shell:
        for command in example.commands:
            run_as_written(example, command, shell)


def run_as_written(example, command, shell) -> None:
    """Run one command of ``example`` in ``shell`` and check what it says it makes."""
    if command.words[0] == "export":
        name, _, value = command.words[1].partition("=")
        shell.env[name] = value
        return
    text = command.text.replace(PLACEHOLDER, RUN_ID)
    dry = needs_a_key(command)
    if dry:
        text = shlex.join([*command.words, "--dry-run"]).replace(PLACEHOLDER, RUN_ID)
    before = files_in(shell.cwd)
    status, output = shell.run(text)
    assert status == 0, (f"README.md:{example.line} (after make {example.setup}): {text}\n"
                         f"{output[-3000:]}")
    if dry:
        assert files_in(shell.cwd) == before, f"{text} wrote files"
    for path in named_outputs(command, output):
        path = path.replace(PLACEHOLDER, RUN_ID)
        assert (shell.cwd / path).exists(), f"{text}: {path} is not there\n{output[-2000:]}"
