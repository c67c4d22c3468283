"""A loopback HTTP server serving testbed files, for the fetcher and the CLI."""

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from llm_aai.arena.catalog import all_tasks

TASKS = [t.task_id for t in all_tasks()[::30]]  # 30 files across all levels


class ServerState:
    """What the server serves and how it misbehaves."""

    def __init__(self, files):
        self.files = dict(files)
        self.truncate = {}  # name -> how many more responses to cut mid-body
        self.requests = []  # (name, Range header)
        self.lock = threading.Lock()


def make_handler(state):
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's naming)
            name = self.path.rsplit("/", 1)[-1]
            with state.lock:
                state.requests.append((name, self.headers.get("Range")))
                cut = state.truncate.get(name, 0)
                if cut:
                    state.truncate[name] = cut - 1
            body = state.files.get(name)
            if body is None:
                self.send_error(404)
                return
            start = 0
            if self.headers.get("Range"):
                start = int(self.headers["Range"].removeprefix("bytes=").rstrip("-"))
                if start >= len(body):
                    self.send_error(416)
                    return
                self.send_response(206)
                self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
            else:
                self.send_response(200)
            chunk = body[start:]
            self.send_header("Content-Length", str(len(chunk)))
            self.end_headers()
            if cut:  # promise the whole body, send a third of it, hang up
                self.wfile.write(chunk[: max(1, len(chunk) // 3)])
                self.wfile.flush()
                self.close_connection = True
                return
            self.wfile.write(chunk)

        def log_message(self, *args):
            pass

    return Handler


def _serve(files):
    state = ServerState(files)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(state))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}/configs/competition"
    return state, httpd


@pytest.fixture
def server(testbed_dir):
    """30 testbed files laid out as the official repository serves them."""
    state, httpd = _serve({f"{t}.yaml": (testbed_dir / f"{t}.yaml").read_bytes() for t in TASKS})
    yield state
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def full_server(testbed_dir):
    """All 900 testbed files: a mirror a first use can fill the cache from."""
    state, httpd = _serve({p.name: p.read_bytes() for p in testbed_dir.glob("*.yaml")})
    yield state
    httpd.shutdown()
    httpd.server_close()
