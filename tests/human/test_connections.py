"""Idle and slow connections: bounded, timed out, logged on one line, never in a person's way."""

from __future__ import annotations

import socket
import time

import httpx
import pytest

from llm_aai.human.connections import Gate, LoopErrors
from tests.human.conftest import served

BOUND = 4
TIMEOUT_S = 1.5


@pytest.fixture(scope="module")
def gated(testbed_dir, tmp_path_factory):
    """A server taking at most 4 connections, each 1.5 s to send its request."""
    with served(tmp_path_factory.mktemp("gated"), testbed_dir, max_connections=BOUND,
                request_timeout=TIMEOUT_S) as running:
        yield running


def _idle(url: str, count: int) -> list[socket.socket]:
    host, port = url.removeprefix("http://").rsplit(":", 1)
    return [socket.create_connection((host, int(port)), timeout=10) for _ in range(count)]


def _closed_within(sock: socket.socket, seconds: float) -> bool:
    """Whether the server closes ``sock`` within ``seconds`` (what it sent before is skipped)."""
    sock.settimeout(seconds)
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            if sock.recv(4096) == b"":
                return True
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True
    return False


def test_idle_connections_beyond_the_bound_do_not_keep_a_person_out(gated, capfd):
    idle = _idle(gated.url, 6 * BOUND)
    try:
        started = time.monotonic()
        with httpx.Client(base_url=gated.url, timeout=10) as client:
            for _ in range(3):  # each request on a new connection, all while the idle stay
                answer = client.get("/", headers={"connection": "close"})
                assert answer.status_code == 200
        assert time.monotonic() - started < 5
        assert sum(_closed_within(sock, 0.2) for sock in idle) >= 6 * BOUND - BOUND
    finally:
        for sock in idle:
            sock.close()
    err = capfd.readouterr().err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if "idle connection" in line]
    assert lines and all(line.startswith("human server: closed an idle connection")
                         for line in lines)
    assert len(lines) <= 3  # once a second at most, with the count


def test_an_idle_connection_is_closed_after_the_timeout(gated, capfd):
    (sock,) = _idle(gated.url, 1)
    with sock:
        started = time.monotonic()
        assert _closed_within(sock, TIMEOUT_S + 3)
        assert TIMEOUT_S - 0.3 <= time.monotonic() - started
    assert "Traceback" not in capfd.readouterr().err


def test_a_client_trickling_its_headers_is_closed_at_the_timeout(gated):
    (sock,) = _idle(gated.url, 1)
    with sock:
        started = time.monotonic()
        request = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 200
        closed = False
        for byte in request:  # a byte every 0.1 s: it never finishes in time
            try:
                sock.sendall(bytes([byte]))
            except (BrokenPipeError, ConnectionResetError):
                closed = True
                break
            time.sleep(0.1)
            if time.monotonic() - started > TIMEOUT_S + 3:
                break
        assert closed or _closed_within(sock, 1.0)
        assert time.monotonic() - started < TIMEOUT_S + 3


def test_a_connection_kept_alive_is_timed_again_after_each_answer(gated):
    (sock,) = _idle(gated.url, 1)
    with sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        sock.settimeout(10)
        assert sock.recv(65536).startswith(b"HTTP/1.1 200")
        assert _closed_within(sock, TIMEOUT_S + 6)  # then idle: closed again


def test_when_every_connection_is_busy_a_new_one_is_answered_503():
    said: list[str] = []
    gate = Gate(1, 10.0, say=said.append)

    class Busy:  # a connection whose request the app is answering
        pass

    newcomer = Busy()
    assert gate.make_room(newcomer, 1)  # within the bound
    assert not gate.make_room(newcomer, 2)  # over it, and nobody waits
    assert said == ["human server: refused a connection: 1 so far (1 open, the most "
                    "--max-connections takes, all in use)"]


def test_the_event_loops_errors_are_one_line_a_second_with_their_count():
    now = [0.0]
    said: list[str] = []
    errors = LoopErrors(clock=lambda: now[0], say=said.append)
    failed = {"message": "socket.accept() out of system resource",
              "exception": OSError(24, "Too many open files")}
    for _ in range(500):  # asyncio retrying an accept that has no file to open
        errors(None, failed)
    now[0] = 1.0
    errors(None, failed)
    assert said == [
        "human server: socket.accept() out of system resource: OSError: [Errno 24] Too many "
        "open files (1 event loop errors so far)",
        "human server: socket.accept() out of system resource: OSError: [Errno 24] Too many "
        "open files (501 event loop errors so far)"]
