"""Whether a model call that timed out had its connection: a request never sent is not billed.

The client's deadline (``call_within``) and the HTTP client's connect timeout are the same
``--timeout``, and the deadline starts first: a call to a host that drops packets ends in a
``CallTimeout`` while its thread is still connecting, and the exception says nothing of it.
The thread's sockets say it: every ``socket.connect`` raises the audit event
``socket.connect``, and a hook (added once, process-wide, as audit hooks are) keeps the
sockets the watched thread connects. A socket that has no peer yet at the deadline is a
connection never made. A call that reused a pooled connection connects nothing: it was sent.
"""

from __future__ import annotations

import socket
import sys
import threading
from typing import Any

__all__ = ["ConnectWatch"]

_local = threading.local()
_hooked = False
_hook_lock = threading.Lock()


def _on_audit(event: str, args: tuple[Any, ...]) -> None:
    if event == "socket.connect":
        watch = getattr(_local, "watch", None)
        if watch is not None and args and isinstance(args[0], socket.socket):
            watch.sockets.append(args[0])


class ConnectWatch:
    """The sockets one thread connects while ``watching()``; ``connecting()`` after a deadline."""

    def __init__(self) -> None:
        global _hooked
        self.sockets: list[socket.socket] = []
        with _hook_lock:
            if not _hooked:
                sys.addaudithook(_on_audit)
                _hooked = True

    def watch(self) -> None:
        """Watch the calling thread's connections (for the rest of its life: a call's own)."""
        _local.watch = self

    def connecting(self) -> bool:
        """Whether the last connection the thread began is not made yet (no peer)."""
        if not self.sockets:
            return False
        last = self.sockets[-1]
        try:
            last.getpeername()
        except OSError:
            return last.fileno() != -1  # a closed socket was done with, not still connecting
        return False
