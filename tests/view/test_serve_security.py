"""``view --serve`` over real loopback sockets: only its own host names, only the site's files.

A web page whose name was pointed at 127.0.0.1 (DNS rebinding) sends its own name in ``Host``;
a symlink in the site folder, or a path that climbs, must not reach the file beside the site.
"""

from __future__ import annotations

import functools
import http.client
import os
import shutil
import socket
import threading
from http.server import ThreadingHTTPServer

import pytest

from llm_aai.hosts import loopback_names
from llm_aai.view import SiteBuilder, serve
from llm_aai.view.files import SiteWriteError
from llm_aai.view.serve import SiteHandler

SECRET = b"secret beside the site"


@pytest.fixture(scope="module")
def served(small_runs, tmp_path_factory):
    """``(port, site)`` of ``serve`` on the heuristic run, with links planted in the site."""
    root = tmp_path_factory.mktemp("served")
    (root / "secret.txt").write_bytes(SECRET)
    (root / "secrets").mkdir()
    (root / "secrets" / "key.txt").write_bytes(SECRET)
    site = root / "site"
    urls, stop = [], threading.Event()
    thread = threading.Thread(target=serve, args=(SiteBuilder([small_runs["heuristic"]], site),
                                                  0),
                              kwargs={"interval": 0.2, "ready": urls.append, "stop": stop})
    thread.start()
    try:
        while not urls and thread.is_alive():
            stop.wait(0.05)
        assert urls, "the server did not start"
        (site / "leak.txt").symlink_to(root / "secret.txt")
        (site / "out").symlink_to(root / "secrets", target_is_directory=True)
        (site / "assets" / "inner.html").symlink_to(site / "index.html")
        yield int(urls[0].split(":")[2].split("/")[0]), site
    finally:
        stop.set()
        thread.join(timeout=10)


def _get(port: int, path: str, host: str | None = "default",
         address: str = "127.0.0.1") -> tuple[int, bytes]:
    """GET ``path`` as given (no normalising) with exactly this Host header (None: none)."""
    connection = http.client.HTTPConnection(address, port, timeout=10)
    try:
        connection.putrequest("GET", path, skip_host=True, skip_accept_encoding=True)
        if host == "default":
            host = f"127.0.0.1:{port}"
        if host is not None:
            connection.putheader("Host", host)
        connection.endheaders()
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "127.0.0.1", "localhost:{port}",
                                  "LOCALHOST:{port}", "localhost.", "127.0.0.1:9999"])
def test_its_own_names_are_answered_with_any_port(served, host):
    port, _ = served
    status, body = _get(port, "/index.html", host.format(port=port))
    assert status == 200 and b"<h1>Runs</h1>" in body


@pytest.mark.parametrize("host", [
    "evil.example", "evil.example:{port}", "127.0.0.1.evil.example:{port}",
    "localhost.evil.example", "evil.example:{port}@127.0.0.1", "127.0.0.2:{port}",
    "[::1]:{port}", "[::ffff:127.0.0.1]:{port}", "127.0.0.1:", "127.0.0.1:abc",
    "127.0.0.1:70000", "", None,
])
def test_a_foreign_or_malformed_host_is_refused(served, host):
    port, _ = served
    status, body = _get(port, "/index.html", host if host is None else host.format(port=port))
    assert status == 403 and b"Runs" not in body
    assert b"loopback names" in body


@pytest.mark.parametrize("path", [
    "/../secret.txt", "/%2e%2e/secret.txt", "/%2E%2E/secret.txt", "/%2e%2e%2fsecret.txt",
    "/..%2fsecret.txt", "/..%2Fsecret.txt", "//../secret.txt", "//..//secret.txt",
    "/..\\secret.txt", "/%5c..%5csecret.txt", "/..%5csecret.txt", "/assets/../../secret.txt",
    "/assets/%2e%2e/%2e%2e/secret.txt", "/./../secret.txt", "/%2e/%2e%2e/secret.txt",
    "/leak.txt", "/out/key.txt", "/out/", "/out", "/%6ceak.txt", "/leak.txt/",
    "/{secret}", "//{secret}", "/%2f{secret}", "/..{secret}", "/../../../../../../{secret}",
])
def test_no_path_reaches_a_file_outside_the_site(served, path):
    port, site = served
    status, body = _get(port, path.format(secret=str(site.parent / "secret.txt").lstrip("/")))
    assert status == 404 and SECRET not in body


def test_a_folder_is_never_listed(served):
    port, _ = served
    assert _get(port, "/assets/")[0] == 404 and _get(port, "/episode")[0] == 404
    assert _get(port, "/")[0] == 200  # the site's own index.html


def test_a_link_that_stays_inside_the_site_is_served(served):
    port, _ = served
    status, body = _get(port, "/assets/inner.html")
    assert status == 200 and b"<h1>Runs</h1>" in body


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as sock:
            sock.bind(("::1", 0))
        return True
    except OSError:
        return False


class _IPv6Server(ThreadingHTTPServer):
    address_family = socket.AF_INET6


@pytest.mark.skipif(not _ipv6_loopback(), reason="this machine has no IPv6 loopback")
@pytest.mark.parametrize(("host", "status"), [
    ("[::1]:{port}", 200), ("[0:0:0:0:0:0:0:1]:{port}", 200), ("[::1]", 200),
    ("localhost:{port}", 200), ("::1", 403), ("::1:{port}", 403), ("[::2]:{port}", 403),
    ("127.0.0.1:{port}", 403), ("evil.example:{port}", 403), ("[::1]:", 403),
])
def test_the_site_handler_on_the_ipv6_loopback_answers_only_its_names(served, host, status):
    _, site = served
    handler = functools.partial(SiteHandler, directory=str(site), names=loopback_names("::1"))
    with _IPv6Server(("::1", 0), handler) as server:
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            port = server.server_address[1]
            got, _ = _get(port, "/index.html", host.format(port=port), address="::1")
            assert got == status
            assert _get(port, "/leak.txt", f"[::1]:{port}", address="::1")[0] == 404
        finally:
            server.shutdown()
            thread.join()


def test_a_rebuild_that_would_write_outside_is_reported_and_the_last_site_kept(small_runs,
                                                                              tmp_path):
    run = tmp_path / "run"
    shutil.copytree(small_runs["heuristic"], run)
    (tmp_path / "victim.html").write_text("precious")
    site = tmp_path / "site"
    urls, errors, stop = [], [], threading.Event()
    thread = threading.Thread(target=serve, args=(SiteBuilder([run], site), 0),
                              kwargs={"interval": 0.1, "ready": urls.append, "stop": stop,
                                      "on_error": errors.append})
    thread.start()
    try:
        while not urls and thread.is_alive():
            stop.wait(0.05)
        (site / "episodes.html").unlink()
        (site / "episodes.html").symlink_to(tmp_path / "victim.html")
        os.utime(run / "episodes" / "01-04-03_t2" / "result.json")  # as if sealed again
        while not errors and thread.is_alive():
            stop.wait(0.05)
        assert isinstance(errors[0], SiteWriteError) and "episodes.html" in str(errors[0])
        assert (tmp_path / "victim.html").read_text() == "precious"
        port = int(urls[0].split(":")[2].split("/")[0])
        assert _get(port, "/index.html")[0] == 200 and thread.is_alive()
    finally:
        stop.set()
        thread.join(timeout=10)
