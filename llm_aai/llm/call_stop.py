"""A run's stop, as the model calls of the thread playing an episode see it.

A client waits in two places before it sends: for its turn at the provider's gate (a free
slot, the rate window, a 429's pause) and between tries (``call_with_retries``). Both can
last up to a minute, and a stop must not wait them out and then send a call nobody will
read. The runner knows of the stop; the waits sit in the client, a few layers below the
agent that owns it. So the runner states the stop for its episode's thread
(``calls_stop_when``), and the waits ask it (``wait_unless_stopped``): a context variable,
which ``call_within`` also carries into the call's own thread. Where no stop is stated
(a client used on its own) the waits are plain sleeps.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["POLL_S", "CallCancelled", "calls_stop_when", "raise_if_stopping",
           "wait_unless_stopped"]

POLL_S = 0.1
"""How often a waiting call asks whether the run stopped: a stop is heard within this."""

_should_stop: ContextVar[Callable[[], bool] | None] = ContextVar("llm_aai_should_stop",
                                                                 default=None)


class CallCancelled(Exception):
    """The run stopped while this call waited for its turn or its next try; nothing was sent."""


@contextmanager
def calls_stop_when(should_stop: Callable[[], bool]) -> Iterator[None]:
    """In the ``with`` block, this thread's model calls give up waiting once ``should_stop()``."""
    token = _should_stop.set(should_stop)
    try:
        yield
    finally:
        _should_stop.reset(token)


def raise_if_stopping() -> None:
    """Raise ``CallCancelled`` if the run this call belongs to has stopped."""
    should_stop = _should_stop.get()
    if should_stop is not None and should_stop():
        raise CallCancelled("the run stopped before this call was sent")


def wait_unless_stopped(seconds: float) -> None:
    """Sleep ``seconds``, or raise ``CallCancelled`` as soon as the run stops."""
    deadline = time.monotonic() + seconds
    while True:
        raise_if_stopping()
        left = deadline - time.monotonic()
        if left <= 0:
            return
        time.sleep(min(left, POLL_S) if _should_stop.get() is not None else left)
