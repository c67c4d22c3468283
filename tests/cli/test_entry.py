"""Every command's entry point: a reader that closes stdout early (``| head -1``) is no error."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from llm_aai.cli.entry import run_command

COMMANDS = {
    "run --dry-run": ["llm_aai.run", "--model", "heuristic", "--tasks", "01-04-03",
                      "--dry-run"],
    "arenas list": ["llm_aai.arenas", "list", "--level", "1"],
    "the llm-aai command": ["llm_aai.cli.main", "run", "--model", "random", "--tasks",
                            "01-04-03", "--dry-run"],
}


@pytest.mark.parametrize("command", COMMANDS.values(), ids=COMMANDS.keys())
def test_output_into_a_closed_pipe_stops_quietly(command, testbed_dir):
    reader, writer = os.pipe()
    os.close(reader)  # the reader has gone before the first line: every write meets EPIPE
    try:
        done = subprocess.run([sys.executable, "-m", *command], stdout=writer,
                              stderr=subprocess.PIPE, text=True, timeout=120,
                              env={**os.environ, "LLM_AAI_ARENAS": str(testbed_dir)})
    finally:
        os.close(writer)
    assert (done.returncode, done.stderr) == (0, "")


def test_a_broken_pipe_that_is_not_stdouts_is_raised_on():
    def main():
        raise BrokenPipeError(32, "a worker's pipe")

    with pytest.raises(BrokenPipeError):
        run_command(main)


def test_the_exit_status_is_mains():
    assert run_command(lambda: 2) == 2
