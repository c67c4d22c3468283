"""``--ray-address`` checked in seconds: ``auto`` resolved as Ray resolves it, and an address
where something other than a gRPC server (Ray's GCS) accepts connections refused."""

from __future__ import annotations

import http.server
import socket
import threading
import time

import pytest

from llm_aai.execution.ray_address import (
    RayUnreachable,
    check_address,
    ray_address_file,
    resolve_address,
)


@pytest.fixture
def no_cluster_recorded(monkeypatch, tmp_path):
    """Ray's lookup for ``auto`` sees an empty temporary folder and no RAY_ADDRESS (so no
    cluster another test or person on this machine started is found)."""
    monkeypatch.setenv("RAY_TMPDIR", str(tmp_path / "raytmp"))
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    return tmp_path / "raytmp" / "ray" / "ray_current_cluster"


def test_auto_is_looked_up_where_ray_looks(monkeypatch, tmp_path):
    """Ray's own path for its address file (read in Ray's source; private, so checked here
    against the installed Ray, which would move it under our feet)."""
    utils = pytest.importorskip("ray._common.utils")
    for variables in ({"RAY_TMPDIR": str(tmp_path / "a")}, {"TMPDIR": str(tmp_path / "b")}, {}):
        for name in ("RAY_TMPDIR", "TMPDIR"):
            monkeypatch.delenv(name, raising=False)
        for name, value in variables.items():
            monkeypatch.setenv(name, value)
        assert str(ray_address_file()) == utils.get_ray_address_file(None)


def test_auto_is_ray_address_then_the_latest_ray_start(monkeypatch, no_cluster_recorded):
    no_cluster_recorded.parent.mkdir(parents=True)
    no_cluster_recorded.write_text("10.0.0.7:6379\n")
    found = resolve_address("auto")
    assert (found.address, found.source) == ("10.0.0.7:6379", str(no_cluster_recorded))
    monkeypatch.setenv("RAY_ADDRESS", "ray://10.0.0.8:10001")
    found = resolve_address("auto")
    assert (found.address, found.source) == ("ray://10.0.0.8:10001", "RAY_ADDRESS")
    assert str(found) == "auto (ray://10.0.0.8:10001, from RAY_ADDRESS)"
    assert resolve_address("10.0.0.9:6379").address == "10.0.0.9:6379"  # not auto: as given


def test_auto_with_no_cluster_to_find_fails_at_once_naming_the_flag(no_cluster_recorded):
    started = time.monotonic()
    with pytest.raises(RayUnreachable) as refused:
        check_address("auto")
    assert time.monotonic() - started < 1
    message = str(refused.value)
    assert message.startswith("--ray-address auto: no Ray cluster to join (RAY_ADDRESS is not "
                              "set and no `ray start` recorded one in ")
    assert str(no_cluster_recorded) in message and "\n" not in message


class _Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (the standard library's name)
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def web_server():
    """An HTTP/1.1 server on every interface (a local host is checked at the node's address)."""
    server = http.server.ThreadingHTTPServer(("0.0.0.0", 0), _Page)  # noqa: S104
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def silent_listener():
    """A port that accepts connections and never says a word."""
    with socket.socket() as listener:
        listener.bind(("0.0.0.0", 0))  # noqa: S104
        listener.listen(8)
        yield f"127.0.0.1:{listener.getsockname()[1]}"


def test_a_web_server_is_not_taken_for_a_cluster(web_server):
    pytest.importorskip("ray")
    started = time.monotonic()
    with pytest.raises(RayUnreachable) as refused:
        check_address(web_server)
    assert time.monotonic() - started < 5
    message = str(refused.value)
    assert message.startswith(f"--ray-address {web_server}: something answers there but it "
                              "is not a Ray cluster (it answered '")
    assert "not HTTP/2); give the address `ray start --head` printed" in message


def test_a_listener_that_never_answers_is_not_taken_for_a_cluster(silent_listener):
    pytest.importorskip("ray")
    with pytest.raises(RayUnreachable, match=r"it is not a Ray cluster \(no HTTP/2 answer "
                                             r"within 1 s\)"):
        check_address(silent_listener, timeout=1.0)


def test_auto_from_ray_address_is_checked_and_says_where_it_came_from(monkeypatch, web_server,
                                                                      no_cluster_recorded):
    pytest.importorskip("ray")
    monkeypatch.setenv("RAY_ADDRESS", web_server)
    with pytest.raises(RayUnreachable, match=rf"^--ray-address auto \({web_server}, from "
                                             r"RAY_ADDRESS\): something answers there but"):
        check_address("auto")


def test_ray_s_tls_leaves_the_protocol_unchecked(monkeypatch, web_server):
    """With RAY_USE_TLS the GCS expects a TLS handshake first: only the connection is checked."""
    pytest.importorskip("ray")
    monkeypatch.setenv("RAY_USE_TLS", "1")
    check_address(web_server)  # accepted: nothing here can tell a TLS GCS from a web page
