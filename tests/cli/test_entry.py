"""Every command's entry point: a reader that closes stdout early (``| head -1``): no traceback."""

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


def closed_pipe_run(args: list[str], **kwargs) -> subprocess.CompletedProcess:
    """``python args`` with a stdout whose reader has gone before the first line."""
    reader, writer = os.pipe()
    os.close(reader)
    try:
        return subprocess.run([sys.executable, *args], stdout=writer, stderr=subprocess.PIPE,
                              text=True, timeout=120, **kwargs)
    finally:
        os.close(writer)


@pytest.mark.parametrize("command", COMMANDS.values(), ids=COMMANDS.keys())
def test_output_into_a_closed_pipe_stops_quietly(command, testbed_dir):
    """No traceback; exit 1, as the Python docs' recipe: the command was cut short."""
    done = closed_pipe_run(["-m", *command],
                           env={**os.environ, "LLM_AAI_ARENAS": str(testbed_dir)})
    assert (done.returncode, done.stderr) == (1, "")


def test_a_broken_pipe_that_is_not_stdouts_is_raised_on():
    def main():
        raise BrokenPipeError(32, "a worker's pipe")

    with pytest.raises(BrokenPipeError):
        run_command(main)


def test_a_failing_command_cut_short_by_the_pipe_still_fails(tmp_path, testbed_dir):
    """``arenas validate DIR | head -1`` over invalid files: exit 1, not 0."""
    for n in range(300):  # more than a pipe's buffer of errors: main meets the closed pipe
        (tmp_path / f"bad{n:03}.yaml").write_text("!ArenaConfig\narenas: [not an arena]\n")
    done = closed_pipe_run(["-m", "llm_aai.arenas", "validate", str(tmp_path)],
                           env={**os.environ, "LLM_AAI_ARENAS": str(testbed_dir)})
    assert (done.returncode, done.stderr) == (1, "")


def test_mains_own_status_is_kept_when_only_the_last_flush_fails():
    code = ("import sys\nfrom llm_aai.cli.entry import run_command\n"
            "def main():\n    print('invalid: 3 files')\n    return 3\n"
            "sys.exit(run_command(main))\n")
    buffered = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    done = closed_pipe_run(["-c", code], env=buffered)  # the line waits for the last flush
    assert (done.returncode, done.stderr) == (3, "")
