"""A real study server on 127.0.0.1 (uvicorn in a thread) and real HTTP clients for it.

The browser fixtures are the viewer tests' (a headless system Chromium through Playwright).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from llm_aai.human import Study, bind, serve
from tests.view.conftest import browser, page  # noqa: F401 - the viewer's real Chromium

REPO = Path(__file__).resolve().parents[2]
RESOLUTION = 64
SCRIPTS_0403 = ["Turn(-30);Go(35);", "Go(30);"]
"""Scripts that pass 01-04-03 (the green ball far ahead on the left): face it, then run."""


@dataclass
class Served:
    """A running study server."""

    url: str
    study: Study
    out: Path

    def client(self, **headers: str) -> httpx.Client:
        """A client of the app keeping its own cookies (one participant's browser)."""
        return httpx.Client(base_url=self.url, timeout=120, headers=headers)


@contextmanager
def served(out: Path, testbed_dir: Path, tasks: str = "01-04-03", host: str = "127.0.0.1",
           **options) -> Iterator[Served]:
    """Serve a study of ``tasks`` at 64 px on ``host`` until the block ends."""
    study = Study.create(out=out, tasks=tasks, arenas_dir=testbed_dir, resolution=RESOLUTION)
    sock = bind(host, 0)
    stop = threading.Event()
    ready = threading.Event()
    urls: list[str] = []
    thread = threading.Thread(target=serve, args=(study, sock), daemon=True,
                              kwargs={"stop": stop, "ready": lambda url: (urls.append(url),
                                                                          ready.set()),
                                      **options})
    thread.start()
    assert ready.wait(30), "the server did not start"
    try:
        yield Served(urls[0].rstrip("/"), study, out)
    finally:
        stop.set()
        thread.join(30)
        assert not thread.is_alive(), "the server did not stop"


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """Where the browser tests save screenshots (``artifacts/human``, git-ignored)."""
    folder = REPO / "artifacts" / "human"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="module")
def server(testbed_dir, tmp_path_factory) -> Iterator[Served]:
    """One server for the module: 01-04-03 then 01-06-02."""
    with served(tmp_path_factory.mktemp("human"), testbed_dir, "01-04-03,01-06-02",
                max_sessions=64) as running:  # the module's tests leave their sessions open
        yield running


def start(client: httpx.Client, participant: str, interface: str = "script") -> dict:
    """Start a session and wait for its first level to await the participant."""
    response = client.post("/api/sessions", json={"participant": participant,
                                                  "interface": interface})
    assert response.status_code == 200, response.text
    return settled(client)


def settled(client: httpx.Client, timeout: float = 60.0) -> dict:
    """The session's view once it waits for the participant (or has stopped)."""
    deadline = time.monotonic() + timeout
    while True:
        view = client.get("/api/state").json()
        if view["phase"] not in ("starting", "playing") or time.monotonic() > deadline:
            return view
        time.sleep(0.1)
