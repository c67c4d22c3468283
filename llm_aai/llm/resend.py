"""What a caller holds before a call is sent again after a try that may be billed.

A try sent without a usable reply (it timed out, its reply held no choice) may be billed,
and a retry may be billed again. A budget reserves one call's estimate before the call, so
it must reserve another before each such retry, or refuse it: the retries happen in the
client, a few layers below the budget that wraps it (under the input check). So the budget
states what to do for its thread (``before_each_resend``), and the client asks it
(``hold_for_resend``) before it sends a try that follows an unanswered one: a context
variable, as ``llm_aai.llm.call_stop`` states a run's stop.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["before_each_resend", "hold_for_resend"]

_hook: ContextVar[Callable[[], None] | None] = ContextVar("llm_aai_before_resend", default=None)


@contextmanager
def before_each_resend(hook: Callable[[], None]) -> Iterator[None]:
    """In the ``with`` block, run ``hook()`` before each try that follows an unanswered one.

    What it raises (``BudgetReached``) ends the call, that try unsent.
    """
    token = _hook.set(hook)
    try:
        yield
    finally:
        _hook.reset(token)


def hold_for_resend() -> None:
    """Run the hook stated for this thread, if any (a client used on its own has none)."""
    hook = _hook.get()
    if hook is not None:
        hook()
