"""``python -m llm_aai.human serve``: one-line errors before serving."""

from __future__ import annotations

import re
import resource
import signal
import socket
import subprocess
import sys

import httpx
import pytest

from llm_aai.cli.human import main


def test_an_unknown_task_is_one_line_and_exit_2(tmp_path, testbed_dir, capsys):
    assert main(["serve", "--tasks", "99-99-99", "--arenas-dir", str(testbed_dir),
                 "--out", str(tmp_path)]) == 2
    error = capsys.readouterr().err
    assert error.startswith("error: ") and "99-99-99" in error and error.count("\n") == 1


def test_a_port_in_use_is_one_line_and_exit_2(tmp_path, testbed_dir, capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        assert main(["serve", "--tasks", "01-04-03", "--arenas-dir", str(testbed_dir),
                     "--out", str(tmp_path), "--port", str(port)]) == 2
    assert f"cannot listen on 127.0.0.1:{port}" in capsys.readouterr().err


@pytest.mark.slow
def test_serve_answers_on_the_loopback_and_ctrl_c_ends_it_cleanly(tmp_path, testbed_dir):
    command = [sys.executable, "-m", "llm_aai.human", "serve", "--tasks", "01-04-03",
               "--arenas-dir", str(testbed_dir), "--out", str(tmp_path), "--port", "0",
               "--resolution", "64"]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
    try:
        url = None
        for line in server.stdout:
            found = re.search(r"serving (http://127\.0\.0\.1:\d+/)", line)
            if found:
                url = found.group(1)
                break
        assert url is not None, server.stderr.read()
        with httpx.Client(base_url=url, timeout=60) as client:
            assert "Participant id" in client.get("/?control=keys").text
            started = client.post("/api/sessions", json={"participant": "cli",
                                                         "interface": "script"})
            assert started.status_code == 200
    finally:
        server.send_signal(signal.SIGINT)
        assert server.wait(60) == 0
    assert (tmp_path / "human-script-cli" / "manifest.json").is_file()


@pytest.mark.parametrize(("flag", "value"), [
    ("--max-connections", "0"), ("--request-timeout", "0"), ("--request-timeout", "inf"),
    ("--takeover-after", "-1"), ("--takeover-after", "nan")])
def test_a_bad_bound_is_one_line_and_exit_2(flag, value, tmp_path, testbed_dir, capsys):
    assert main(["serve", "--tasks", "01-04-03", "--arenas-dir", str(testbed_dir),
                 "--out", str(tmp_path), "--port", "0", flag, value]) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"error: {flag} must be") and error.count("\n") == 1


@pytest.mark.slow
def test_idle_connections_past_the_open_files_limit_leave_it_serving_and_quiet(
        tmp_path, testbed_dir):
    """The audit's attack: far more idle sockets than the process may open files."""
    limit = 400  # the default bound is then 104 connections

    def low_limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

    command = [sys.executable, "-m", "llm_aai.human", "serve", "--tasks", "01-04-03",
               "--arenas-dir", str(testbed_dir), "--out", str(tmp_path), "--port", "0"]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, preexec_fn=low_limit)
    idle: list[socket.socket] = []
    try:
        url = None
        for line in server.stdout:
            if found := re.search(r"serving http://127\.0\.0\.1:(\d+)/", line):
                url = int(found.group(1))
                break
        assert url is not None
        for _ in range(3 * limit):
            idle.append(socket.create_connection(("127.0.0.1", url), timeout=10))
        with httpx.Client(base_url=f"http://127.0.0.1:{url}", timeout=10) as client:
            assert client.get("/").status_code == 200
    finally:
        for sock in idle:
            sock.close()
        server.send_signal(signal.SIGINT)
        try:
            assert server.wait(60) == 0
        except subprocess.TimeoutExpired:
            server.kill()
            raise
    err = server.stderr.read()
    assert "Traceback" not in err and len(err) < 4000, err[:2000]
    assert "closed an idle connection to make room" in err
