"""``python -m llm_aai.llm.fake_server``: a real subprocess, driven by a real run and by curl-like
requests, and refused bad arguments. Before, the command printed nothing and exited 0."""

from __future__ import annotations

import json
import os
import re
import select
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

from llm_aai.llm.fake_server_cli import DEFAULT_REPLY
from llm_aai.logs import read_turns
from tests.helpers.runs import keyless_env, run_module
from tests.helpers.signals import start_module

MODULE = "llm_aai.llm.fake_server"


@contextmanager
def fake_server(*args, stop_with=signal.SIGTERM):
    """The server as a subprocess; yields (process, base URL) once it has printed its line."""
    process = start_module(MODULE, *args)
    try:
        ready, _, _ = select.select([process.stdout], [], [], 60)
        assert ready, "the server printed nothing in 60 s"
        line = process.stdout.readline()
        assert line.startswith("serving on http://127.0.0.1:") and line.endswith("/v1\n"), (
            line + process.stderr.read())
        yield process, line.removeprefix("serving on ").strip()
    finally:
        if process.poll() is None:
            process.send_signal(stop_with)
        process.communicate(timeout=30)


def ask(url: str, text: str = "hello") -> tuple[int, dict]:
    """One chat completion request; its status and JSON body."""
    body = json.dumps({"model": "fake", "messages": [{"role": "user", "content": text}]})
    request = urllib.request.Request(f"{url}/chat/completions", data=body.encode(),
                                     headers={"Content-Type": "application/json",
                                              "Authorization": "Bearer sk-not-to-be-kept"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def content(reply: dict) -> str:
    return reply["choices"][0]["message"]["content"]


def test_a_real_run_plays_the_files_replies_through_a_fault_and_is_recorded(testbed_dir,
                                                                            tmp_path):
    replies = tmp_path / "replies.yaml"
    replies.write_text('- Think("first");Turn(30);\n- "Go(2);"\n')
    record = tmp_path / "requests.jsonl"
    with fake_server("--replies", replies, "--fault", "429:0@2", "--record", record,
                     "--reply", "Turn(10);") as (server, url):
        run = run_module("llm_aai.run", "--model", "openai/fake", "--api-base", url,
                         "--tasks", "01-01-01", "--full-testbed", "--arenas-dir", testbed_dir,
                         "--out", tmp_path, "--run-id", "r", "--resolution", 64,
                         "--max-scripts", 3, "--no-progress",
                         env={**keyless_env(), "OPENAI_API_KEY": "sk-secret-1"}, timeout=240)
        server.send_signal(signal.SIGTERM)
        _, stderr = server.communicate(timeout=30)
    assert run.returncode == 0, run.stderr
    assert server.returncode == 0, stderr
    assert "stopped after 4 requests" in stderr and "Traceback" not in stderr
    turns = read_turns(tmp_path / "r" / "episodes" / "01-01-01_t1")
    assert [t.reply for t in turns if t.reply is not None] == [
        'Think("first");Turn(30);', "Go(2);", "Turn(10);"]
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    assert [line["request"] for line in lines] == [1, 2, 3, 4]
    assert lines[1]["fault"] == "RateLimit(retry_after=0.0)"  # retried by the run
    assert [line.get("reply") for line in lines] == [
        'Think("first");Turn(30);', None, "Go(2);", "Turn(10);"]
    assert lines[0]["body"]["messages"][0]["role"] == "system"
    assert "sk-secret-1" not in record.read_text()


@pytest.mark.parametrize("stop_with", [signal.SIGINT, signal.SIGTERM])
def test_the_built_in_reply_with_no_file_and_a_clean_stop(stop_with):
    with fake_server() as (server, url):
        assert [content(ask(url)[1]) for _ in range(2)] == [DEFAULT_REPLY] * 2
        server.send_signal(stop_with)
        stdout, stderr = server.communicate(timeout=30)
    assert server.returncode == 0, stderr
    assert stdout == "" and stderr == "stopped after 2 requests\n"


def test_faults_from_a_file_delay_and_a_text_replies_file(tmp_path):
    replies = tmp_path / "replies.txt"
    replies.write_text("Go(1);\n\nTurn(45);\n")
    faults = tmp_path / "faults.txt"
    faults.write_text("# the second request fails, the third is cut short\n503@2\ncut@3\n")
    with fake_server("--replies", replies, "--faults", faults, "--delay", "0.3") as (_, url):
        started = time.monotonic()
        first = ask(url)
        assert time.monotonic() - started >= 0.3
        answers = [first, ask(url), ask(url), ask(url)]
    assert [status for status, _ in answers] == [200, 503, 200, 200]
    assert content(answers[0][1]) == "Go(1);"
    assert content(answers[2][1]) == "Turn(45);"
    assert answers[2][1]["choices"][0]["finish_reason"] == "length"
    assert content(answers[3][1]) == DEFAULT_REPLY


def test_a_port_of_its_own(tmp_path):
    port = free_port()
    with fake_server("--port", port) as (_, url):
        assert url == f"http://127.0.0.1:{port}/v1"
        assert ask(url)[0] == 200


def _fails(*args) -> str:
    """Run the server with bad ``args``: it must exit 2 at once; its stderr."""
    result = run_module(MODULE, *args, timeout=60)
    assert result.returncode == 2, result.stderr
    assert result.stdout == "" and "Traceback" not in result.stderr
    return result.stderr


@pytest.mark.parametrize("port", ["70000", "-1", "http"])
def test_a_bad_port_is_refused_naming_the_flag(port):
    assert "argument --port" in _fails("--port", port)


def test_a_missing_replies_file_is_named(tmp_path):
    missing = tmp_path / "nope.yaml"
    assert f"error: {missing}: cannot read it" in _fails("--replies", missing)


@pytest.mark.parametrize("name, text, where", [
    ("replies.yaml", "- Go(1);\n- [Turn(3);\n", ":3:"),       # unclosed flow list
    ("replies.yaml", "- Go(1);\n- 12\n", ":2: reply 2 is not text"),
    ("replies.yaml", "reply: Go(1);\n", ":1: a YAML list"),
    ("replies.json", '[\n  "Go(1);",\n  {"a": 1}\n]\n', ":3: reply 2 is"),
    ("replies.json", '[\n  "Go(1);",\n  "Turn(3);\n]\n', ":3: not JSON"),
    ("replies.txt", "", ": no replies"),
])
def test_a_malformed_replies_file_is_refused_naming_file_and_line(tmp_path, name, text, where):
    path = tmp_path / name
    path.write_text(text)
    assert f"error: {path}{where}" in _fails("--replies", path)


def test_a_bad_fault_is_refused_naming_the_flag_or_the_line(tmp_path):
    assert "argument --fault: '429'" in _fails("--fault", "429")
    faults = tmp_path / "faults.txt"
    faults.write_text("429@1\n\nteapot@3\n")
    assert f"error: {faults}:3: 'teapot@3': unknown fault" in _fails("--faults", faults)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.1"])
def test_an_address_off_the_loopback_needs_allow_remote(host):
    stderr = _fails("--host", host)
    assert f"--host {host}" in stderr and "--allow-remote" in stderr


def test_a_busy_port_is_an_error_naming_the_address_and_keeps_an_earlier_record(tmp_path):
    record = tmp_path / "requests.jsonl"
    record.write_text('{"request": 1}\n')
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_module(MODULE, "--port", port, "--record", record, timeout=60)
    assert result.returncode == 1 and result.stdout == ""
    assert f"error: cannot listen on 127.0.0.1:{port}" in result.stderr
    assert record.read_text() == '{"request": 1}\n'


def test_a_record_file_that_cannot_be_written_is_named(tmp_path):
    target = tmp_path / "no-such-folder" / "requests.jsonl"
    assert f"--record {target}: cannot write it" in _fails("--record", target)


def test_localhost_is_the_loopback(tmp_path):
    with fake_server("--host", "localhost") as (_, url):
        assert ask(url)[0] == 200


def test_the_documented_example_runs_as_printed(tmp_path):
    """docs/testing.md's block, its port swapped for a free one, in an empty folder."""
    page = Path(__file__).resolve().parents[2] / "docs" / "testing.md"
    blocks = [block for block in re.findall(r"```bash\n(.*?)```", page.read_text(), re.S)
              if f"python -m {MODULE}" in block]
    assert len(blocks) == 1
    port = str(free_port())
    env = {**keyless_env(), "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    result = subprocess.run(["bash", "-e", "-c", blocks[0].replace("8765", port)],
                            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert f"serving on http://127.0.0.1:{port}/v1" in result.stdout
    assert "1 episodes" in result.stdout
    assert len(list((tmp_path / "results").glob("*/episodes/01-01-01_t1/turns.jsonl"))) == 1
    deadline = time.monotonic() + 30
    while _listening(int(port)):  # the server ends at the kill
        assert time.monotonic() < deadline, "the server outlived the example"
        time.sleep(0.1)


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_two_faults_for_one_request_are_refused(tmp_path):
    assert "both answer request 2" in _fails("--fault", "429@2", "--fault", "drop@2")

