"""Replies a provider should never send, through a whole run: what the run records and sends.

Real subprocess, real litellm HTTP, the fake server on 127.0.0.1 (issue 51).
"""

from __future__ import annotations

import json

from llm_aai.llm.fake_server import FakeChatServer
from tests.runner.test_provider_faults import base_args, run_cli

MB = 1_000_000


def text_of(message) -> str:
    content = message["content"]
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text", "") for part in content if part.get("type") == "text")


def test_a_reply_of_one_huge_word_is_quoted_in_part_in_the_next_request(testbed_dir, tmp_path):
    """The feedback quotes a bounded excerpt: the next request carries the word once only."""
    huge = "Q" * MB
    with FakeChatServer(["Go(1);", huge], default="Go(2);") as server:
        done = run_cli(base_args(testbed_dir, tmp_path, server.url, scripts=3))
        bodies = [request.body for request in server.requests]
    assert done.returncode == 0, done.stderr
    assert len(bodies) == 3
    after = bodies[2]["messages"]
    assert after[-2] == {"role": "assistant", "content": huge}  # the history keeps the reply
    feedback = text_of(after[-1])
    assert "unknown command 'QQQQ" in feedback and "..." in feedback
    assert feedback.count("Q") < 200
    grown = len(json.dumps(bodies[2])) - len(json.dumps(bodies[1]))
    assert MB < grown < MB + 10_000  # was twice the word: once replied, once quoted
