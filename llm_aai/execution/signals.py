"""SIGTERM read as Ctrl-C, so a scheduler's stop ends a long command as cleanly as a user's."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def interrupt_on_sigterm() -> Iterator[None]:
    """Within the block, SIGTERM raises ``KeyboardInterrupt`` in the main thread.

    The commands that run an executor answer ``KeyboardInterrupt`` by ending the workers and
    keeping what finished; a ``kill`` (a scheduler's preemption) then leaves the same
    resumable state as Ctrl-C. Outside the main thread (which alone receives signals) it does
    nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum, frame) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
