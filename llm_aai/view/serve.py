"""Serve a built site on 127.0.0.1 and rebuild it while its runs add episodes.

The standard library's threading HTTP server serves the site's files; a watcher thread polls
the run directories (which episodes are sealed, and when) and rebuilds when that changes.
Polling keeps it dependency-free and works on every file system, including network mounts.

The server answers only GET and HEAD of files that resolve inside the site's folder (a symlink
placed there that leads out is a 404, as is a folder without an ``index.html``: no listings),
and only requests whose ``Host`` names it by a loopback name (``llm_aai.hosts``), so a web page
whose name was pointed at 127.0.0.1 cannot read the site.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import BinaryIO

from llm_aai.analysis import RunDirectoryError
from llm_aai.hosts import LOOPBACK, host_allowed, loopback_names
from llm_aai.logs.store import EPISODES, RESULT
from llm_aai.replay.episode import ReplayInputError
from llm_aai.view.files import SiteWriteError
from llm_aai.view.site import BuildReport, SiteBuilder

HOST = LOOPBACK
INDEX = "index.html"


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


class SiteHandler(SimpleHTTPRequestHandler):
    """Answers GET and HEAD with the site's files, for a request naming a loopback host.

    Args:
        directory: the site's folder.
        names: the host names it answers to (``hosts.loopback_names``).

    """

    def __init__(self, *args, directory: str, names: frozenset[str] | None, **kwargs):
        self.names = names
        self.site = Path(directory).resolve()
        super().__init__(*args, directory=directory, **kwargs)

    def send_head(self) -> BinaryIO | None:
        """Open the file asked for and send its headers; refuse anything else."""
        if not host_allowed(self.headers.get("Host"), self.names):
            self.send_error(HTTPStatus.FORBIDDEN, "this server answers only to its own "
                                                  "loopback names (Host header)")
            return None
        path = self.site_file(self.path)
        if path is None:
            self.send_error(HTTPStatus.NOT_FOUND, "File not found")
            return None
        try:
            opened = path.open("rb")
        except OSError:
            self.send_error(HTTPStatus.NOT_FOUND, "File not found")
            return None
        size = os.fstat(opened.fileno()).st_size
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Length", str(size))
        self.send_header("Cache-Control", "no-cache")  # the site is rebuilt as runs grow
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        return opened

    def site_file(self, url_path: str) -> Path | None:
        """The file ``url_path`` names, resolved, if it lies inside the site; else None.

        ``translate_path`` decodes the URL and drops ``..`` parts; the result is then resolved
        (symlinks followed) and kept only inside the site. A folder means its ``index.html``.
        """
        wanted = Path(self.translate_path(url_path))
        if wanted.is_dir():
            wanted = wanted / INDEX
        real = wanted.resolve()
        return real if real.is_relative_to(self.site) and real.is_file() else None

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
        on_error: called when a rebuild fails on a malformed log (or a file it would write
            outside the site); the last good site stays served and the next change is tried
            again. Errors of the first build are raised.

    Raises:
        RunDirectoryError, ReplayInputError, SiteWriteError: the first build failed.

    """
    stop = stop or threading.Event()
    state = run_state(builder.run_dirs)
    report = builder.build()
    if on_build:
        on_build(report)
    handler = functools.partial(SiteHandler, directory=str(builder.out),
                                names=loopback_names(HOST))
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
                    except (RunDirectoryError, ReplayInputError, SiteWriteError) as error:
                        if on_error is None:
                            raise
                        on_error(error)
                        continue
                    if on_build:
                        on_build(report)
        finally:
            server.shutdown()
            thread.join()
