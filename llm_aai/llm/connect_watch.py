"""Whether a model call that timed out had its connection: a request never sent is not billed.

The client's deadline (``call_within``) and the HTTP client's connect timeout are the same
``--timeout``, and the deadline starts first: a call to a host that drops packets ends in a
``CallTimeout`` while its thread is still connecting, and the exception says nothing of it.
The thread's sockets say it: every ``socket.connect`` raises the audit event
``socket.connect``, and a hook (added once, process-wide, as audit hooks are) keeps the
sockets the watched thread connects. A socket that has no peer yet at the deadline is a
connection never made. A call that reused a pooled connection connects nothing: it was sent
if the thread is in the HTTP client (httpcore) at the deadline.
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
    """The sockets one thread connects once it ``watch()``es; ``may_have_sent()`` at a deadline."""

    def __init__(self) -> None:
        global _hooked
        self.sockets: list[socket.socket] = []
        self.thread_id = -1
        with _hook_lock:
            if not _hooked:
                sys.addaudithook(_on_audit)
                _hooked = True

    def watch(self) -> None:
        """Watch the calling thread's connections (for the rest of its life: a call's own)."""
        self.thread_id = threading.get_ident()
        _local.watch = self

    def may_have_sent(self) -> bool:
        """Whether the watched call may have sent its request by now (it is still running).

        Not if its last connection is not made yet; nor if it connected nothing and is not
        in the HTTP client yet (litellm's first call sets up for a while). A call inside
        httpcore that connected nothing uses a pooled connection: sent.
        """
        if self.sockets:
            last = self.sockets[-1]
            try:
                last.getpeername()
            except OSError:
                return last.fileno() == -1  # closed: done with, not still connecting
            return True
        frame = sys._current_frames().get(self.thread_id)
        if frame is None:
            return True  # ended meanwhile: what it did is not known
        while frame is not None:
            if str(frame.f_globals.get("__name__", "")).startswith("httpcore"):
                return True
            frame = frame.f_back
        return False
