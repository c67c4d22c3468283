"""The signal harness: start a command, wait until it has reached a point, stop it.

Ctrl-C (SIGINT), a scheduler's SIGTERM, a closed terminal's SIGHUP and SIGKILL are sent to
real subprocesses; what a test then asserts (exit code, the resume line, the files kept) is
its own.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

__all__ = ["alive", "children_of", "has_lines", "start_module", "stop", "wait_until"]


def start_module(module: str, *args, **kwargs) -> subprocess.Popen:
    """Start ``python -m module args`` with its stdout and stderr piped as text."""
    return subprocess.Popen([sys.executable, "-m", module, *map(str, args)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            **kwargs)


def wait_until(ready: Callable[[], bool], process: subprocess.Popen | None = None, *,
               timeout: float = 300, poll: float = 0.1) -> None:
    """Wait until ``ready()``; fail if ``timeout`` passes or ``process`` exits first."""
    deadline = time.monotonic() + timeout
    while not ready():
        assert time.monotonic() < deadline, f"not ready after {timeout} s"
        assert process is None or process.poll() is None, (
            f"the process exited ({process.returncode}) before it was ready")
        time.sleep(poll)


def has_lines(path: Path, count: int) -> Callable[[], bool]:
    """A ``wait_until`` condition: ``path`` exists and holds at least ``count`` lines."""
    return lambda: path.exists() and path.read_text().count("\n") >= count


def stop(process: subprocess.Popen, signum: int, *, timeout: float = 180) -> tuple[str, str]:
    """Send ``signum`` and wait for the process to exit; its (stdout, stderr)."""
    process.send_signal(signum)
    return process.communicate(timeout=timeout)


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, exited but not yet reaped, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:  # it was reaped between the two looks
        return False
    return stat.split(") ")[-1][:1] != "Z"


def children_of(pid: int) -> set[int]:
    """The processes ``pid`` started (Linux's /proc)."""
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        text = (task / "children").read_text() if (task / "children").exists() else ""
        found |= {int(child) for child in text.split()}
    return found
