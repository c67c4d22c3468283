"""The signals that stop a command as Ctrl-C does: a scheduler's ``kill``, a closed terminal.

Every command that cleans up on Ctrl-C (a run's summary, a served site's temporary folder)
takes them here, so SIGTERM and SIGHUP leave what Ctrl-C leaves.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["STOP_SIGNALS", "stop_on_signals"]

STOP_SIGNALS = {signal.SIGTERM: "terminated (SIGTERM)",
                **({signal.SIGHUP: "hung up (SIGHUP)"} if hasattr(signal, "SIGHUP") else {})}
"""Signals that stop a command as Ctrl-C does -> how it names them: a scheduler's preemption
or ``kill``, and a closed terminal or a dropped SSH session (POSIX only)."""


@contextmanager
def stop_on_signals() -> Iterator[list[int]]:
    """Treat SIGTERM and SIGHUP as Ctrl-C, and any of them (Ctrl-C included) only once.

    Within the block the first of them raises ``KeyboardInterrupt`` in the main thread. A run
    then stops its episodes in flight at their next turn, brings the summary up to date and
    prints the resume command, instead of dying with nothing said; a served site removes its
    temporary folder. Any later one of them is ignored until the process ends (``SIG_IGN``),
    so the first one's clean-up is not cut short, nor the exit after it: the interpreter puts
    the default action back on signals with Python handlers as it shuts down, and a second
    SIGTERM then killed it (exit -15, not 143); a second Ctrl-C broke off the wait for the
    episodes in flight and closed their environments under them. A SIGKILL still ends it,
    and a killed run resumes too. Ctrl-C is taken only where Python takes it: a process
    started with SIGINT ignored (a shell's background job) keeps ignoring it.

    Yields:
        A list that holds the signal's number once one has arrived (empty until then); the
        previous handlers are back on exit unless one did.

    """
    received: list[int] = []

    def handle(signum: int, _frame: Any) -> None:
        if not received:
            received.append(signum)
            for number in (*STOP_SIGNALS, signal.SIGINT):
                signal.signal(number, signal.SIG_IGN)
            raise KeyboardInterrupt

    if threading.current_thread() is not threading.main_thread():  # only it gets signals
        yield received
        return
    taken = [*STOP_SIGNALS, *([signal.SIGINT]
                              if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN else [])]
    previous = {number: signal.signal(number, handle) for number in taken}
    try:
        yield received
    finally:
        if not received:  # after one, the process is ending: later ones stay ignored
            for number, handler in previous.items():
                signal.signal(number, handler)
