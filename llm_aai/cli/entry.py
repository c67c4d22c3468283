"""What every command's entry point does around its ``main``: a reader that stops reading.

``python -m llm_aai.run ... --dry-run | head -1`` closes the pipe after one line; the next
write (or the flush at exit) then raises ``BrokenPipeError``, which Python reports with a
traceback and exit 1 (or, at the flush, "Exception ignored" and exit 120). A reader that has
read enough is not an error to report: the command stops quietly, as the Python
documentation's recipe does, its stdout pointed at the null device so nothing more is written
to the closed pipe. Its exit status stays what it would say: ``main``'s own when ``main``
returned (only the last flush met the closed pipe), else 1 as in the recipe, since the
command did not finish (``arenas validate DIR | head -1`` over invalid files must not exit 0).
"""

from __future__ import annotations

import os
import select
import sys
from collections.abc import Callable

__all__ = ["run_command"]


def run_command(main: Callable[[], int | None]) -> int | None:
    """Run ``main`` and return its exit status; quietly once stdout's reader has gone.

    ``main``'s status if it returned one, else 1: a ``main`` cut short by the closed pipe
    did not finish what it checks.

    A ``BrokenPipeError`` that is not stdout's (a pipe to a worker, a socket) is raised on.
    """
    code: int | None = 1  # until main returns: cut short, it did not finish
    try:
        code = main()
        sys.stdout.flush()  # the last lines meet the closed pipe here, not at the exit
    except BrokenPipeError:
        if not _stdout_closed():
            raise
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the interpreter's flush at exit goes nowhere
        os.close(devnull)
        return code
    return code


def _stdout_closed() -> bool:
    """Whether stdout is a pipe (or socket) whose reader has closed it."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # replaced by a test's capture, or closed
        return False
    if not hasattr(select, "poll"):  # Windows: a broken pipe there is stdout's, most likely
        return True
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    return any(events & select.POLLERR for _, events in poller.poll(0))
