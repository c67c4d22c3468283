"""A bound on the server's open connections and on how long a client may take to send a request.

uvicorn keeps a connection that never sends a request open for ever, so a few hundred idle
sockets (or clients trickling their headers a byte at a time) use up the process's open files,
after which every accept fails and asyncio logs a traceback for each. Here each HTTP
connection is ``GatedH11Protocol`` (uvicorn's own h11 protocol, with a ``Gate``):

* a connection is *waiting* from the moment it opens, and again once its answer is sent, until
  its next request has come in whole (headers and body); a connection that waits longer than
  the request timeout is closed;
* when a new connection would pass the bound, the one that has waited longest is closed to
  make room (only waiting ones: a request being answered or a keyboard's WebSocket is never
  cut); when none waits, the new one is answered 503 and closed;
* each such event is logged on one line, at most once a second (with the count so far), never
  as a traceback; so are the event loop's own errors (``LoopErrors``).

asyncio accepts up to ``BACKLOG`` connections at a time before any of them is seen here, so a
burst can hold the bound plus two such batches for a moment: ``default_max_connections``
leaves room for them under the process's open-files limit.

So a person's request is answered at once however many idle sockets are open.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["BACKLOG", "Gate", "GatedH11Protocol", "LoopErrors", "default_max_connections"]

BACKLOG = 64
"""Connections waiting to be accepted, and the most asyncio accepts in one go (uvicorn's
default of 2,048 let one burst use up the open files before any could be closed)."""

MOST_CONNECTIONS = 256
"""The default bound where the process may open many files: a few connections per
participant's browser, far more than a study needs."""

REFUSED = (b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n"
           b"connection: close\r\ncontent-length: 46\r\n\r\n"
           b"too many connections are open; try again soon\n")


def default_max_connections() -> int:
    """The default bound: ``MOST_CONNECTIONS``, or less where the process may open few files.

    What the open-files limit leaves after two accept batches (``BACKLOG``) and 64 files for
    the sessions' simulators and logs, halved (macOS lets a process open 256 files unless told
    otherwise: 32 connections; Linux commonly 1,024: 256).
    """
    try:
        import resource
    except ImportError:  # Windows: no such limit to read
        return MOST_CONNECTIONS
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return MOST_CONNECTIONS
    return max(8, min(MOST_CONNECTIONS, (soft - 2 * BACKLOG - 64) // 2))


class Gate:
    """The server's connections that wait for their client, oldest first, and the bound.

    Args:
        max_connections: the most connections open at once (HTTP and WebSockets).
        request_timeout: seconds a connection may wait for its client's whole request.
        clock: monotonic seconds (a test may give its own).
        say: where the one-line notes go.

    """

    def __init__(self, max_connections: int, request_timeout: float, *,
                 clock: Callable[[], float] = time.monotonic,
                 say: Callable[[str], None] | None = None) -> None:
        self.max_connections = max_connections
        self.request_timeout = request_timeout
        self._clock = clock
        self._say = say or (lambda line: print(line, file=sys.stderr, flush=True))
        self._waiting: dict[GatedH11Protocol, float] = {}  # insertion order: oldest first
        self._counts: dict[str, int] = {}
        self._said: dict[str, float] = {}

    def waits(self, protocol: GatedH11Protocol) -> bool:
        """Whether ``protocol`` waits for its client now."""
        return protocol in self._waiting

    def wait(self, protocol: GatedH11Protocol) -> None:
        """``protocol`` waits for a request (kept from when it began waiting)."""
        self._waiting.setdefault(protocol, self._clock())

    def busy(self, protocol: GatedH11Protocol) -> None:
        """``protocol``'s request came in whole, or it left HTTP (closed, a WebSocket)."""
        self._waiting.pop(protocol, None)

    def make_room(self, newcomer: GatedH11Protocol, open_now: int) -> bool:
        """Close the longest-waiting connection if ``open_now`` passes the bound.

        Returns False when nothing can be closed: the newcomer is to be refused.
        """
        if open_now <= self.max_connections:
            return True
        oldest = next((p for p in self._waiting if p is not newcomer), None)
        if oldest is None:
            self.note("refused", "refused a connection: {n} so far ({max} open, the most "
                                 "--max-connections takes, all in use)")
            return False
        self.busy(oldest)
        oldest.close()
        self.note("evicted", "closed an idle connection to make room for a new one: {n} so far "
                             "({max} open, the most --max-connections takes)")
        return True

    def note(self, kind: str, line: str) -> None:
        """Count an event of ``kind`` and say it on one line, once a second at most."""
        self._counts[kind] = self._counts.get(kind, 0) + 1
        now = self._clock()
        if now - self._said.get(kind, -1e9) >= 1.0:
            self._said[kind] = now
            self._say("human server: " + line.format(n=self._counts[kind],
                                                     max=self.max_connections))


class GatedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol, watched by a ``Gate`` (see the module).

    Built by uvicorn with its own arguments; ``gated`` gives the class its gate.
    """

    gate: Gate

    @classmethod
    def gated(cls, gate: Gate) -> type[GatedH11Protocol]:
        """A subclass whose connections ``gate`` watches (uvicorn's ``http`` setting)."""
        return type("GatedH11Protocol", (cls,), {"gate": gate})

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._upgraded = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """A new connection waits for its request; past the bound, room is made or it is refused."""
        super().connection_made(transport)
        self._watch()
        if not self.gate.make_room(self, len(self.connections)):
            self.gate.busy(self)
            transport.write(REFUSED)
            self.close()

    def data_received(self, data: bytes) -> None:
        """Bytes of a request: once it is in whole, the connection no longer waits."""
        super().data_received(data)
        self._watch()

    def on_response_complete(self) -> None:
        """The answer is sent: the connection waits for its next request."""
        super().on_response_complete()
        self._watch()

    def handle_websocket_upgrade(self, event: Any) -> None:
        """A WebSocket is no HTTP request: it is not timed (the keyboard's stays open)."""
        self._upgraded = True
        self._stop_watching()
        super().handle_websocket_upgrade(event)

    def connection_lost(self, exc: Exception | None) -> None:
        """Forget the connection."""
        self._stop_watching()
        super().connection_lost(exc)

    def close(self) -> None:
        """Close the connection now (its request, if one is half sent, is dropped)."""
        self._stop_watching()
        if not self.transport.is_closing():
            self.transport.close()

    def _watch(self) -> None:
        """Wait for the client, or not, as the request in hand says; time the wait."""
        if self._upgraded or self.transport is None or self.transport.is_closing():
            self._stop_watching()
            return
        cycle = self.cycle
        if cycle is not None and not cycle.more_body and not cycle.response_complete:
            self._stop_watching()  # the request is in: the app answers it, however long
            return
        if not self.gate.waits(self):
            self.gate.wait(self)
            self._deadline = self.loop.call_later(self.gate.request_timeout, self._timed_out)

    def _stop_watching(self) -> None:
        self.gate.busy(self)
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _timed_out(self) -> None:
        self._deadline = None
        if self.gate.waits(self):
            self.gate.note("timed out", "closed a connection that sent no whole request within "
                                        f"{self.gate.request_timeout:g} s: {{n}} so far")
            self.close()


class LoopErrors:
    """The event loop's error handler: one line, what failed and the error, no traceback.

    An accept that fails for want of open files (``EMFILE``) is retried by asyncio and reported
    each time, hundreds of times a second; a line a second at most (with the count) keeps the
    log readable.

    Args:
        clock: monotonic seconds (a test may give its own).
        say: where the lines go.

    """

    def __init__(self, *, clock: Callable[[], float] = time.monotonic,
                 say: Callable[[str], None] | None = None) -> None:
        self._clock = clock
        self._say = say or (lambda line: print(line, file=sys.stderr, flush=True))
        self._count = 0
        self._said = -1e9

    def __call__(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        """Say ``context`` on one line (asyncio's handler signature)."""
        self._count += 1
        now = self._clock()
        if now - self._said < 1.0:
            return
        self._said = now
        error = context.get("exception")
        detail = f": {type(error).__name__}: {error}" if error is not None else ""
        self._say(f"human server: {context.get('message', 'event loop error')}{detail} "
                  f"({self._count} event loop errors so far)")
