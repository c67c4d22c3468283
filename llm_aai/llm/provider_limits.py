"""A provider's limits as the run's clients share them: calls in flight, calls per minute, pauses.

A provider bounds a key (or an endpoint) in two ways: calls in flight at once
(``--provider-concurrency``) and requests per minute (``--provider-rpm``); and when it is
overloaded it answers 429 with ``Retry-After``, which speaks for the endpoint, not for the one
call that got it. Every client of a run calling the same endpoint goes through one *gate*
that holds all three, so sixteen episodes in threads (``LocalGate``, here) or on the nodes of
a Ray cluster (the ``ProviderSlots`` actor, ``llm_aai.runner.ray_services``) together keep
within them. ``ProviderPace`` is the part both share: pure bookkeeping with no clock or lock of
its own, so the thread-safe gate and the actor's event loop each drive it their way.

Requests per minute are counted in a rolling window, not a token bucket: a bucket of N tokens
refilled at N per minute lets a full bucket's burst and then the refill through, up to 2N calls
in one 60 s span, while the rolling window never lets more than N calls into any 60 s span,
which is what a provider's "N requests per minute" promises to accept. The provider counts
*arrivals*, and when a call arrives is known here only to lie between its start (its turn) and
its end (its reply, or its error): the HTTP client's set-up before sending took over two
seconds on a loaded machine, so counting starts let three calls arrive within one second under
a limit of two in three. So a call counts from its start until one window after its end (in
flight, it always counts): two arrivals N calls apart are then always a window apart. The
price is a call's own duration per window: calls of 5 s send about 8 % fewer than N a minute.
Of the libraries considered, ``aiolimiter`` is a leaky bucket (the 2N burst above) and
``limits``' moving window counts instants given to it; neither knows a call lasts.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager

from llm_aai.llm.call_stop import raise_if_stopping, wait_unless_stopped

__all__ = ["LEASE_MARGIN_S", "POLL_S", "WINDOW_S", "LocalGate", "ProviderPace",
           "RollingWindow", "local_gate"]

WINDOW_S = 60.0
"""The span ``--provider-rpm`` counts calls in (a minute; tests shorten it)."""

POLL_S = 0.05
"""How often a call held back only by calls in flight looks again (they may end any time)."""

LEASE_MARGIN_S = 5.0
"""How much longer than its call's timeout a cluster slot is lent: the round trips to the
actor and a loaded machine's delays. The client stops waiting for a call at its timeout
(``call_within``) and gives its slot back then, so a slot not given back by the lease's end
belongs to a worker that died holding it. The abandoned request's thread ends only when its
HTTP read does, and a server may go on generating the reply nobody reads: the slot counts
the client's wait, not the server's work (docs/local-models.md)."""


class RollingWindow:
    """At most ``limit`` calls reaching the provider in any span of ``window_s`` seconds.

    A call counts while in flight and until ``window_s`` after it ended (see the module's
    docstring for why not from its start).

    Args:
        limit: calls allowed per window (>= 1).
        window_s: the window's length in seconds.
    """

    def __init__(self, limit: int, window_s: float) -> None:
        if limit < 1:
            raise ValueError(f"a rate limit must be >= 1 call per window, got {limit}")
        self.limit = limit
        self.window_s = window_s
        self.in_flight = 0
        self._ends: deque[float] = deque()

    def delay(self, now: float) -> float:
        """Seconds from ``now`` until a call may start (0: at once).

        ``POLL_S`` when only calls in flight hold it back: they may end at any time.
        """
        while self._ends and self._ends[0] <= now - self.window_s:
            self._ends.popleft()
        if self.in_flight + len(self._ends) < self.limit:
            return 0.0
        return self._ends[0] + self.window_s - now if self._ends else POLL_S

    def begin(self) -> None:
        """Count a call that starts now (after ``delay`` said 0)."""
        self.in_flight += 1

    def end(self, now: float) -> None:
        """A call counted by ``begin`` ended at ``now``."""
        self.in_flight -= 1
        self._ends.append(now)
        if len(self._ends) > 1 and self._ends[-2] > now:  # ends told late: kept in order
            self._ends = deque(sorted(self._ends))


class ProviderPace:
    """When the next call to one endpoint may start: its rate limit and any pause asked.

    Args:
        rpm: calls per ``window_s`` (None: no rate limit, pauses only).
        window_s: the rate limit's window (``WINDOW_S``).
    """

    def __init__(self, rpm: int | None, window_s: float = WINDOW_S) -> None:
        self.window_s = window_s
        self.window: RollingWindow | None = None
        self.paused_until = 0.0
        self.limit_rate(rpm)

    def limit_rate(self, rpm: int | None) -> None:
        """Count calls against ``rpm`` per window from now on (None: no change)."""
        if rpm is not None and self.window is None:
            self.window = RollingWindow(rpm, self.window_s)

    def delay(self, now: float) -> float:
        """Seconds from ``now`` until a call may start (0: at once)."""
        wait = max(0.0, self.paused_until - now)
        if self.window is not None:
            wait = max(wait, self.window.delay(now))
        return wait

    def start(self) -> None:
        """Count a call that starts now."""
        if self.window is not None:
            self.window.begin()

    def finish(self, now: float) -> None:
        """A call counted by ``start`` ended at ``now``."""
        if self.window is not None:
            self.window.end(now)

    def pause(self, until: float) -> None:
        """Start no call before ``until`` (a later pause already asked is kept)."""
        self.paused_until = max(self.paused_until, until)


class LocalGate:
    """The gate of one endpoint for the threads of this process.

    Args:
        limit: calls in flight at once.
        rpm: calls per window (None: no rate limit).
        window_s: the rate limit's window.
    """

    def __init__(self, limit: int, rpm: int | None, window_s: float = WINDOW_S) -> None:
        if limit < 1:
            raise ValueError(f"max_concurrent must be >= 1, got {limit}")
        self.slots = threading.BoundedSemaphore(limit)
        self.pace = ProviderPace(rpm, window_s)
        self._lock = threading.Lock()

    @contextmanager
    def turn(self, lease_s: float) -> Iterator[None]:
        """Hold a slot and wait for the call's turn; the call runs in the ``with`` body.

        ``lease_s`` is what a cluster gate lends the slot for; threads cannot die holding
        one, so here it is not needed. A run that stops while the call waits ends the wait
        with ``CallCancelled`` (``llm_aai.llm.call_stop``).
        """
        while not self.slots.acquire(timeout=POLL_S):
            raise_if_stopping()
        try:
            while True:
                raise_if_stopping()  # last asked just before the turn: no call after a stop
                with self._lock:
                    wait = self.pace.delay(time.monotonic())
                    if wait <= 0:
                        self.pace.start()
                        break
                wait_unless_stopped(wait)
            try:
                yield
            finally:
                with self._lock:
                    self.pace.finish(time.monotonic())
        finally:
            self.slots.release()

    def pause(self, seconds: float) -> None:
        """Hold every call to this endpoint back for ``seconds`` (a 429's Retry-After)."""
        with self._lock:
            self.pace.pause(time.monotonic() + seconds)


_GATES: dict[tuple[str, str | None, int, int | None], LocalGate] = {}
_GATES_LOCK = threading.Lock()


def local_gate(provider: str, api_base: str | None, limit: int,
               rpm: int | None) -> LocalGate:
    """The process-wide gate of one provider endpoint, shared by its clients.

    Clients for the same provider, endpoint and limits share it, so sixteen episodes in
    threads still make at most ``limit`` simultaneous requests and ``rpm`` per window, and a
    429 one of them gets holds them all back. The window is read when the gate is made.
    """
    if limit < 1:
        raise ValueError(f"max_concurrent must be >= 1, got {limit}")
    key = (provider, api_base, limit, rpm)
    with _GATES_LOCK:
        if key not in _GATES:
            _GATES[key] = LocalGate(limit, rpm, WINDOW_S)
        return _GATES[key]
