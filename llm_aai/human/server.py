"""Serve a study on one address with uvicorn until Ctrl-C (or a test's stop).

The socket is bound before the server starts, so port 0 picks a free port that is known at
once, and a busy port is an error before anything else runs. When the server stops, every
session is closed: a level in play stays unfinished in its run (never sealed as played), and
every finished level stays as it was sealed.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable

import uvicorn

from llm_aai.hosts import LOOPBACK, LOOPBACK_NAMES
from llm_aai.human.app import make_app
from llm_aai.human.session import Sessions
from llm_aai.human.study import Study

__all__ = ["LOOPBACK", "bind", "serve"]

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
          ready: Callable[[str], None] | None = None,
          stop: threading.Event | None = None) -> None:
    """Serve ``study`` on the bound ``sock`` until interrupted or ``stop`` is set.

    Args:
        study: the tasks and settings every participant plays.
        sock: from ``bind``.
        max_sessions: the most sessions playing at once.
        ready: called with the app's URL once it answers.
        stop: set it to stop serving (tests); otherwise the server runs until Ctrl-C.

    """
    sessions = Sessions(study, max_live=max_sessions)
    host, port = sock.getsockname()[:2]
    app = make_app(sessions, LOOPBACK_NAMES if host == LOOPBACK else ("*",))
    config = uvicorn.Config(app, log_level="warning", ws_max_size=WS_MAX_BYTES,
                            lifespan="off", access_log=False)
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
        server.run(sockets=[sock])
    finally:
        sessions.close_all("the server stopped")
        if stop is not None:
            stop.set()
