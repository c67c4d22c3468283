"""``python -m llm_aai.human serve``: one-line errors before serving."""

from __future__ import annotations

import re
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
