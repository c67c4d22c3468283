"""The README's shell examples, as a reader would type them, and the set-up each names.

An example is a fenced ``bash`` block. The paragraph just before it names the set-up it needs
(`` `make animalai` ``); one that names none runs after `` `make demo` ``, as the README's
"Set up" section says. A block of ``make`` commands alone is the set-up itself.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from importlib.metadata import packages_distributions
from pathlib import Path

from packaging.utils import canonicalize_name

from tests.helpers.runs import keyless_env

__all__ = ["Command", "Example", "Shell", "examples", "guarded_env", "locks_installed_by",
           "modules_not_installed_by", "run_command", "write_guard"]

FENCE = re.compile(r"^```bash\n(.*?)^```", re.MULTILINE | re.DOTALL)
SETUP = re.compile(r"`make ([a-z][a-z-]*)`")
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==", re.MULTILINE)
DEFAULT_SETUP = "demo"
REPO = Path(__file__).resolve().parents[2]
GUARD_DIR = Path(__file__).parent / "setup_guard"
TIMEOUT = 300


@dataclass(frozen=True)
class Command:
    """One command of an example: its text as bash reads it, and its words."""

    text: str
    words: tuple[str, ...]
    comment: str

    @property
    def module(self) -> str | None:
        """The ``llm_aai`` module it runs (``python -m M`` or the ``llm-aai`` shortcut)."""
        words = self.words
        if len(words) >= 3 and words[0] == "python" and words[1] == "-m":
            return words[2]
        if len(words) >= 2 and words[0] == "llm-aai":
            return f"llm_aai.{words[1]}"
        return None

    def option(self, flag: str) -> str | None:
        """The value given to ``flag`` (``--out X`` or ``--out=X``), if any."""
        for i, word in enumerate(self.words):
            if word == flag and i + 1 < len(self.words) and not self.words[i + 1].startswith("-"):
                return self.words[i + 1]
            if word.startswith(f"{flag}="):
                return word.split("=", 1)[1]
        return None


@dataclass(frozen=True)
class Example:
    """A bash block of the README: where it starts, the set-up it names, its commands."""

    line: int
    setup: str
    commands: tuple[Command, ...]

    @property
    def is_setup(self) -> bool:
        return all(command.words[:1] == ("make",) for command in self.commands)


def split_commands(block: str) -> list[Command]:
    """The block's commands: lines joined where bash joins them (a backslash at the end)."""
    joined = block.replace("\\\n", "")
    commands = []
    for line in joined.splitlines():
        words = shlex.split(line, comments=True)
        if not words:
            continue
        commands.append(Command(line, tuple(words), _comment_of(line)))
    return commands


def _comment_of(line: str) -> str:
    """What follows the first ``#`` that starts a word outside quotes."""
    quote = None
    for i, char in enumerate(line):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or line[i - 1].isspace()):
            return line[i + 1:].strip()
    return ""


def examples(readme: Path) -> list[Example]:
    text = readme.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        before = text[:match.start()].rstrip("\n").split("\n\n")[-1]
        named = SETUP.findall(before)
        found.append(Example(line=text.count("\n", 0, match.start()) + 1,
                             setup=named[-1] if named else DEFAULT_SETUP,
                             commands=tuple(split_commands(match.group(1)))))
    return found


def locks_installed_by(target: str, repo: Path) -> list[Path]:
    """The lock files ``make TARGET`` installs, from its recipes (``make -n -B``: printed, not
    run, every prerequisite taken as out of date, as on a fresh clone), without the flags and
    variables of the ``make test`` it may run under (``MAKEFLAGS``)."""
    env = {k: v for k, v in os.environ.items() if k not in {"MAKEFLAGS", "MFLAGS", "MAKELEVEL"}}
    recipes = subprocess.run(["make", "-n", "-B", target], cwd=repo, env=env,
                             capture_output=True, text=True, check=True).stdout
    return [repo / name for name in re.findall(r"-r\s+(\S+)", recipes)]


def modules_not_installed_by(target: str, repo: Path) -> set[str]:
    """The top-level modules of this environment that ``make TARGET`` would not install."""
    allowed = {"llm-aai", "pip"}
    for lock in locks_installed_by(target, repo):
        allowed |= {canonicalize_name(name) for name in PIN.findall(lock.read_text())}
    modules = {module for module, dists in packages_distributions().items()
               if not {canonicalize_name(d) for d in dists} & allowed}
    ours = {path.stem for path in repo.iterdir()}
    return modules - set(sys.stdlib_module_names) - ours


def write_guard(target: str, repo: Path, path: Path) -> Path:
    """The JSON file ``tests/helpers/setup_guard`` reads for ``make TARGET``."""
    modules = sorted(modules_not_installed_by(target, repo))
    path.write_text(json.dumps({"step": f"make {target}", "modules": modules}))
    return path


def guarded_env(step: str, guard_file: Path, testbed: Path) -> dict[str, str]:
    """This environment as ``make STEP`` alone would leave it, with ``python`` this venv's."""
    env = keyless_env()
    env["PATH"] = f"{Path(sys.executable).parent}:{env['PATH']}"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(GUARD_DIR), str(REPO),
                                                      env.get("PYTHONPATH")]))
    env["LLM_AAI_TEST_SETUP_GUARD"] = str(write_guard(step, REPO, guard_file))
    env["LLM_AAI_ARENAS"] = str(testbed)
    env["ANIMALAI_AUTO_DOWNLOAD"] = "0"
    return env


class Shell:
    """Runs an example's commands one by one in bash, each in its own session.

    What a command leaves in the background (a server started with ``&``) lives on for the
    next commands, as in a reader's terminal, until the example is over: then the process
    groups of its commands are killed.
    """

    def __init__(self, env: dict[str, str], cwd: Path):
        self.env = env
        self.cwd = cwd
        self.groups: list[int] = []

    def __enter__(self) -> Shell:
        return self

    def __exit__(self, *exc) -> None:
        for group in self.groups:
            try:
                os.killpg(group, signal.SIGKILL)
            except ProcessLookupError:  # nothing of it left running
                pass

    def run(self, text: str) -> tuple[int, str]:
        """Run one command line to its end (``TIMEOUT`` at most): its status and output."""
        with tempfile.TemporaryFile("w+", errors="replace") as out:
            shell = subprocess.Popen(["bash", "-c", text], cwd=self.cwd, env=self.env,
                                     stdout=out, stderr=subprocess.STDOUT,
                                     start_new_session=True)
            self.groups.append(shell.pid)
            try:
                status = shell.wait(timeout=TIMEOUT)
            except subprocess.TimeoutExpired:
                status = None
            out.seek(0)
            output = out.read()
        assert status is not None, f"{text}\nran for over {TIMEOUT} s:\n{output[-3000:]}"
        return status, output


def run_command(text: str, env: dict[str, str], cwd: Path) -> tuple[int, str]:
    """Run one command line in a shell of its own: its status and output, both streams."""
    with Shell(env, cwd) as shell:
        return shell.run(text)
