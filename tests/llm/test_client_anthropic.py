"""The default model's path (``claude`` = litellm's Anthropic provider) over real HTTP.

The fake server answers in Anthropic's messages dialect on ``/v1/messages``, so these tests
exercise what a run with ``--model claude`` does: litellm's conversion of our OpenAI-style
messages (system prompt, PNG data URLs) to Anthropic's request, its response parser, its
error mapping (so our retry policy sees a rate limit as a rate limit) and its price table.
"""

from __future__ import annotations

import base64
import io
import logging

import numpy as np
import pytest
from PIL import Image

from llm_aai.llm import LiteLLMClient, LLMRequestError, RetryPolicy, system_message, user_message
from llm_aai.llm.fake_server import FakeChatServer, HTTPError, RateLimit, ServerError

FAST = RetryPolicy(max_attempts=3, initial_wait_s=0.01, max_wait_s=2.0, jitter=False)
HELLO = [system_message("You play a game."), user_message("Your remaining health is 99.9.")]


def claude(server: FakeChatServer, **kw) -> LiteLLMClient:
    kw.setdefault("retry_policy", FAST)
    kw.setdefault("api_key", "test-key")
    return LiteLLMClient("claude", api_base=server.root_url, timeout_s=5.0, **kw)


def test_claude_reply_usage_and_a_known_price():
    with FakeChatServer(['Think("ok");Go(4);']) as server:
        response = claude(server).complete(HELLO)
    assert response.text == 'Think("ok");Go(4);'
    assert response.input_tokens > 0 and response.output_tokens > 0
    assert response.cost_known and response.cost_usd > 0  # the alias is in litellm's prices
    request = server.requests[0]
    assert request.path == "/v1/messages"
    assert request.body["system"] == "You play a game." or (
        request.body["system"][0]["text"] == "You play a game.")
    assert [m["role"] for m in request.body["messages"]] == ["user"]


def test_frames_arrive_as_base64_png_image_blocks():
    frame = np.random.default_rng(1).integers(0, 256, size=(24, 40, 3), dtype=np.uint8)
    message = user_message("Your remaining health is 50.0.", [frame],
                           preamble="Observation captured.")
    with FakeChatServer(["Go(1);"]) as server:
        claude(server).complete([system_message("s"), message])
    parts = server.requests[0].body["messages"][0]["content"]
    assert [p["type"] for p in parts] == ["text", "image", "text"]
    source = parts[1]["source"]
    assert source["type"] == "base64" and source["media_type"] == "image/png"
    decoded = np.asarray(Image.open(io.BytesIO(base64.b64decode(source["data"]))))
    np.testing.assert_array_equal(decoded, frame)


def test_rate_limit_and_server_error_are_retried_honouring_retry_after():
    with FakeChatServer([RateLimit(retry_after=0.5), ServerError(529), "Go(2);"]) as server:
        response = claude(server).complete(HELLO)
    assert response.text == "Go(2);" and response.retries == 2
    assert server.requests[1].received_at - server.requests[0].received_at >= 0.5


def test_bad_request_is_not_retried():
    with FakeChatServer([HTTPError(400, "bad image"), "Go(1);"]) as server:
        with pytest.raises(LLMRequestError) as info:
            claude(server).complete(HELLO)
    assert info.value.status_code == 400 and len(server.requests) == 1


def test_the_key_goes_in_its_header_and_nowhere_else(caplog, capsys):
    sentinel = "sk-ant-SENTINEL-0123456789abcdef"
    caplog.set_level(logging.DEBUG)
    with FakeChatServer([HTTPError(503, f"overloaded for {sentinel}"), "Go(1);"]) as server:
        client = claude(server, api_key=sentinel)
        response = client.complete(HELLO)
    assert server.requests[0].authorization == sentinel  # sent as x-api-key
    for text in (repr(client), str(client.describe()), repr(response), caplog.text,
                 *capsys.readouterr()):
        assert sentinel not in text
