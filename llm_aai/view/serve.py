"""Serve a built site on 127.0.0.1 and rebuild it while its runs add episodes.

The standard library's threading HTTP server serves the site's directory; a watcher thread
polls the run directories (which episodes are sealed, and when) and rebuilds when that changes.
Polling keeps it dependency-free and works on every file system, including network mounts.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from llm_aai.analysis import RunDirectoryError
from llm_aai.logs.store import EPISODES, RESULT
from llm_aai.replay.episode import ReplayInputError
from llm_aai.view.site import BuildReport, SiteBuilder

HOST = "127.0.0.1"


def run_state(run_dirs: list[Path]) -> frozenset:
    """What a rebuild depends on: each sealed episode's result file and its modification time."""
    state = set()
    for run_dir in run_dirs:
        for result in Path(run_dir, EPISODES).glob(f"*/{RESULT}"):
            try:
                state.add((str(result), result.stat().st_mtime_ns))
            except FileNotFoundError:  # moved aside by a resume between glob and stat
                continue
    return frozenset(state)


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class names it so
        """Keep the terminal for build messages."""


def serve(builder: SiteBuilder, port: int = 8000, *, interval: float = 2.0,
          on_build: Callable[[BuildReport], None] | None = None,
          ready: Callable[[str], None] | None = None,
          stop: threading.Event | None = None,
          on_error: Callable[[Exception], None] | None = None) -> None:
    """Serve ``builder.out`` until ``stop`` is set (or Ctrl-C), rebuilding as the runs grow.

    Args:
        builder: builds the site (once before serving, then on every change).
        port: TCP port on 127.0.0.1; 0 picks a free one.
        interval: seconds between checks of the run directories.
        on_build: called with each build's report (the first build included).
        ready: called with the site's URL once it is served.
        stop: set it to stop serving (tests); otherwise the server runs until interrupted.
        on_error: called when a rebuild fails on a malformed log; the last good site stays
            served and the next change is tried again. Errors of the first build are raised.

    Raises:
        RunDirectoryError, ReplayInputError: the first build failed.

    """
    stop = stop or threading.Event()
    state = run_state(builder.run_dirs)
    report = builder.build()
    if on_build:
        on_build(report)
    handler = functools.partial(_QuietHandler, directory=str(builder.out))
    with ThreadingHTTPServer((HOST, port), handler) as server:
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        if ready:
            ready(f"http://{HOST}:{server.server_address[1]}/index.html")
        try:
            while not stop.wait(interval):
                current = run_state(builder.run_dirs)
                if current != state:
                    state = current
                    try:
                        report = builder.build()
                    except (RunDirectoryError, ReplayInputError) as error:
                        if on_error is None:
                            raise
                        on_error(error)
                        continue
                    if on_build:
                        on_build(report)
        finally:
            server.shutdown()
            thread.join()
