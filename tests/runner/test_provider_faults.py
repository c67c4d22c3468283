"""A provider that misbehaves in ways a retry loop does not expect, through a whole run.

Real subprocess, real litellm HTTP, the fake server on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from llm_aai.llm.fake_server import FakeChatServer, HTTPError, Payload, RateLimit
from llm_aai.logs import read_turns


def run_cli(args, timeout=240):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    return subprocess.run([sys.executable, "-m", "llm_aai.run", *map(str, args)],
                          capture_output=True, text=True, env=env, timeout=timeout)


def base_args(testbed_dir, out, url, scripts=2):
    return ["--model", "openai/fake", "--api-base", url, "--tasks", "01-04-03",
            "--arenas-dir", testbed_dir, "--out", out, "--run-id", "r", "--resolution", 64,
            "--max-scripts", scripts, "--no-progress"]


def test_a_run_survives_an_unreadable_retry_after(testbed_dir, tmp_path):
    """``Retry-After: 30s`` is neither seconds nor a date: the backoff applies instead."""
    with FakeChatServer([RateLimit(retry_after="30s")], default="Go(3);") as server:
        done = run_cli(base_args(testbed_dir, tmp_path, server.url))
        answered = len(server.requests)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    episode = tmp_path / "r" / "episodes" / "01-04-03_t1"
    result = json.loads((episode / "result.json").read_text())
    assert result["end_reason"] != "infrastructure" and result["scripts_used"] == 2
    assert answered == 3  # the 429, its retry, the second script
    assert read_turns(episode)[1].usage.retries == 1


def test_a_reply_with_a_lone_surrogate_is_sanitized_and_noted(testbed_dir, tmp_path):
    """A lone surrogate (``\\ud800`` in the JSON) would make every later request unencodable."""
    with FakeChatServer(['Think("odd \ud800 text");Go(3);'], default="Go(2);") as server:
        done = run_cli(base_args(testbed_dir, tmp_path, server.url, scripts=3))
        bodies = [request.body for request in server.requests]
    assert done.returncode == 0, done.stderr
    episode = tmp_path / "r" / "episodes" / "01-04-03_t1"
    result = json.loads((episode / "result.json").read_text())
    assert result["end_reason"] != "infrastructure" and result["infra_error"] is None
    assert result["attempts"] == 1
    assert result["scripts_used"] == 3 and len(bodies) == 3  # no request failed or was retried
    turns = read_turns(episode)
    assert turns[1].reply == 'Think("odd \ufffd text");Go(3);'
    assert any("U+D800" in note for note in turns[1].normalizations), turns[1].normalizations
    assert turns[1].commands[-1] == {"op": "Go", "arg": 3}
    # the history sent on later turns carries the sanitized reply
    assert bodies[2]["messages"][2]["content"] == 'Think("odd \ufffd text");Go(3);'


def test_a_reply_without_choices_is_a_failed_attempt_not_a_crash(testbed_dir, tmp_path):
    """``{"choices": []}`` parses as a reply holding nothing: retried like any malformed one."""
    with FakeChatServer([Payload({"choices": []})], default="Go(3);") as server:
        done = run_cli(base_args(testbed_dir, tmp_path, server.url))
        answered = len(server.requests)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "IndexError" not in done.stderr
    assert "the reply holds no choice" in done.stderr  # the retry's warning names it
    episode = tmp_path / "r" / "episodes" / "01-04-03_t1"
    result = json.loads((episode / "result.json").read_text())
    assert result["end_reason"] != "infrastructure" and result["scripts_used"] == 2
    assert answered == 3  # the empty reply, its retry, the second script
    assert read_turns(episode)[1].usage.retries == 1


def test_a_servers_escape_sequences_never_reach_the_terminal(testbed_dir, tmp_path):
    """A refusal's message is printed: OSC 52 would write the clipboard, CSI 2J clear it."""
    hostile = "denied \x1b]52;c;ZXZpbA==\x07\x1b[2Jfor you"
    with FakeChatServer([HTTPError(401, hostile)]) as server:
        done = run_cli(base_args(testbed_dir, tmp_path, server.url))
    assert done.returncode == 2, done.stderr
    assert "denied for you" in done.stderr
    assert "\x1b" not in done.stderr and "\x07" not in done.stderr
