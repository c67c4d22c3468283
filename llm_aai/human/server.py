"""Serve a study on one address with uvicorn until Ctrl-C (or a test's stop).

The socket is bound before the server starts, so port 0 picks a free port that is known at
once, and a busy port is an error before anything else runs. When the server stops, every
session is closed: a level in play stays unfinished in its run (never sealed as played), and
every finished level stays as it was sealed.

The server bounds its open connections and the time a client may take to send a request
(``connections``), so idle or slow clients cannot use up its open files, and on the loopback
it answers only to this machine's names (``hosts``).
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Callable

import uvicorn

from llm_aai.hosts import LOOPBACK, allowed_hosts
from llm_aai.human.app import make_app
from llm_aai.human.connections import (
    BACKLOG,
    Gate,
    GatedH11Protocol,
    LoopErrors,
    default_max_connections,
)
from llm_aai.human.session import Sessions
from llm_aai.human.study import Study

__all__ = ["LOOPBACK", "REQUEST_TIMEOUT_S", "TAKEOVER_AFTER_S", "bind", "serve"]

REQUEST_TIMEOUT_S = 10.0
"""How long a connection may take to send a whole request (or stay idle between two)."""
TAKEOVER_AFTER_S = 30.0
"""How long a session must have had no page before its participant id may take it over."""
WS_MAX_BYTES = 65_536
"""The largest WebSocket message the server reads (a key event is a few dozen bytes)."""


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (0: a free port).

    Raises:
        OSError: the address is taken or cannot be used.

    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def serve(study: Study, sock: socket.socket, *, max_sessions: int = 8,
          max_connections: int | None = None, request_timeout: float = REQUEST_TIMEOUT_S,
          takeover_after: float = TAKEOVER_AFTER_S,
          ready: Callable[[str], None] | None = None,
          stop: threading.Event | None = None) -> None:
    """Serve ``study`` on the bound ``sock`` until interrupted or ``stop`` is set.

    Args:
        study: the tasks and settings every participant plays.
        sock: from ``bind``.
        max_sessions: the most sessions playing at once.
        max_connections: the most connections open at once (``connections.Gate``; None:
            ``default_max_connections``, from the open files the process may have).
        request_timeout: seconds a connection may take to send a whole request.
        takeover_after: seconds with no page after which a session may be taken over
            (``Sessions.open``).
        ready: called with the app's URL once it answers.
        stop: set it to stop serving (tests); otherwise the server runs until Ctrl-C.

    """
    sessions = Sessions(study, max_live=max_sessions, takeover_after=takeover_after)
    host, port = sock.getsockname()[:2]
    app = make_app(sessions, allowed_hosts(host))
    gate = Gate(max_connections or default_max_connections(), request_timeout)
    config = uvicorn.Config(app, log_level="warning", ws_max_size=WS_MAX_BYTES,
                            lifespan="off", access_log=False, loop="asyncio", backlog=BACKLOG,
                            http=GatedH11Protocol.gated(gate))
    server = uvicorn.Server(config)
    url = f"http://{f'[{host}]' if ':' in host else host}:{port}/"
    watcher = None
    if stop is not None or ready is not None:
        def watch() -> None:
            while not server.started and not (stop is not None and stop.is_set()):
                time.sleep(0.05)
            if ready is not None and server.started:
                ready(url)
            if stop is not None:
                stop.wait()
                server.should_exit = True
        watcher = threading.Thread(target=watch, daemon=True, name="human-serve-watch")
        watcher.start()
    try:
        asyncio.run(_serve_quietly(server, sock))
    finally:
        sessions.close_all("the server stopped")
        if stop is not None:
            stop.set()


async def _serve_quietly(server: uvicorn.Server, sock: socket.socket) -> None:
    """``server.serve`` on a loop whose own errors (a failed accept) are logged on one line."""
    asyncio.get_running_loop().set_exception_handler(LoopErrors())
    await server.serve(sockets=[sock])
