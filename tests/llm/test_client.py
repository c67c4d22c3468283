"""LiteLLMClient through the real litellm HTTP path against the fake OpenAI server."""

from __future__ import annotations

import base64
import dataclasses
import io
import logging
import threading
import time

import numpy as np
import pytest
from PIL import Image

from llm_aai.llm import (
    LiteLLMClient,
    LLMRequestError,
    LLMUnavailable,
    RetryPolicy,
    system_message,
    user_message,
)
from llm_aai.llm.errors import UnresolvedHost
from llm_aai.llm.fake_server import (
    BadBytes,
    Delay,
    Drop,
    FakeChatServer,
    HTTPError,
    Payload,
    RateLimit,
    ServerError,
    Trickle,
)

FAST = RetryPolicy(max_attempts=3, initial_wait_s=0.01, max_wait_s=2.0, jitter=False)


def make_client(server: FakeChatServer, **kw) -> LiteLLMClient:
    kw.setdefault("retry_policy", FAST)
    kw.setdefault("timeout_s", 5.0)
    return LiteLLMClient("openai/fake-vision", api_base=server.url, api_key="test-key", **kw)


HELLO = [system_message("You play a game."), user_message("Your remaining health is 99.9.")]


def test_success_reports_text_usage_and_settings():
    with FakeChatServer(["Think(\"hi\");Go(5);"]) as server:
        response = make_client(server, max_tokens=321).complete(HELLO)
    assert response.text == 'Think("hi");Go(5);'
    assert response.retries == 0
    assert response.input_tokens > 0 and response.output_tokens > 0
    assert response.raw_finish_reason == "stop"
    assert response.cost_usd == 0.0 and response.cost_known is False  # unpriced fake model
    assert response.latency_s > 0
    body = server.requests[0].body
    assert body["temperature"] == 0.0 and body["max_tokens"] == 321
    assert [m["role"] for m in body["messages"]] == ["system", "user"]


def test_images_are_sent_as_png_content_parts():
    rng = np.random.default_rng(0)
    frame = rng.integers(0, 256, size=(32, 48, 3), dtype=np.uint8)
    message = user_message("Your remaining health is 50.0.", [frame, frame],
                           preamble="Observation captured.")
    with FakeChatServer(["Go(1);"]) as server:
        make_client(server).complete([system_message("s"), message])
    parts = server.requests[0].body["messages"][1]["content"]
    assert [p["type"] for p in parts] == ["text", "image_url", "image_url", "text"]
    url = parts[1]["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    decoded = np.asarray(Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))))
    np.testing.assert_array_equal(decoded, frame)


def test_rate_limit_waits_for_retry_after():
    with FakeChatServer([RateLimit(retry_after=0.6), "Go(2);"]) as server:
        response = make_client(server).complete(HELLO)
    assert response.text == "Go(2);" and response.retries == 1
    waited = server.requests[1].received_at - server.requests[0].received_at
    assert 0.6 <= waited < 1.5  # the policy's own backoff would be 0.01 s


def test_retry_after_is_capped_by_max_wait():
    policy = RetryPolicy(max_attempts=2, initial_wait_s=0.01, max_wait_s=0.2, jitter=False)
    with FakeChatServer([RateLimit(retry_after=30), "Go(2);"]) as server:
        response = make_client(server, retry_policy=policy).complete(HELLO)
    assert response.retries == 1
    assert server.requests[1].received_at - server.requests[0].received_at < 1.0


@pytest.mark.parametrize("fault", [ServerError(500), ServerError(503), Drop()],
                         ids=["500", "503", "dropped"])
def test_transient_fault_then_success(fault):
    with FakeChatServer([fault, "Turn(90);"]) as server:
        response = make_client(server).complete(HELLO)
    assert response.text == "Turn(90);" and response.retries == 1
    assert len(server.requests) == 2


def test_a_call_that_timed_out_is_not_retried_and_says_what_a_slow_server_needs():
    """The server goes on generating the abandoned reply: a retry would queue behind it."""
    with FakeChatServer([Delay(3.0, then="late"), "Go(3);"]) as server:
        client = make_client(server, timeout_s=0.5, max_tokens=100)
        with pytest.raises(LLMUnavailable) as info:
            client.complete(HELLO)
        assert len(server.requests) == 1
    message = str(info.value)
    assert "timed out, and is not retried" in message
    assert "--timeout" in message and "--max-tokens" in message
    assert "100 tokens in 0.5 s takes 200.0 tokens/s" in message, message


def test_timeout_then_success_when_timeouts_may_be_retried():
    with FakeChatServer([Delay(3.0, then="late"), "Go(3);"]) as server:
        response = make_client(server, timeout_s=0.5, retry_policy=RetryPolicy(
            max_attempts=3, timeout_retries=1)).complete(HELLO)
    assert response.text == "Go(3);" and response.retries == 1
    waited = server.requests[1].received_at - server.requests[0].received_at
    assert 0.5 <= waited < 2.5


def test_retries_exhausted_raise_llm_unavailable():
    with FakeChatServer([ServerError(500)] * 5) as server:
        with pytest.raises(LLMUnavailable) as info:
            make_client(server).complete(HELLO)
    assert info.value.attempts == 3
    assert len(server.requests) == 3  # neither litellm nor the OpenAI SDK retried on its own


@pytest.mark.parametrize("status", [400, 401, 404])
def test_non_transient_errors_are_not_retried(status):
    with FakeChatServer([HTTPError(status, "nope"), "Go(1);"]) as server:
        with pytest.raises(LLMRequestError) as info:
            make_client(server).complete(HELLO)
    assert info.value.status_code == status
    assert len(server.requests) == 1


def test_no_api_key_in_any_output(caplog, capsys):
    sentinel = "sk-SENTINEL-0123456789abcdefXYZ"
    script = [HTTPError(503, f"overloaded for key {sentinel}"), "Go(1);",
              HTTPError(401, f"Incorrect API key provided: {sentinel}")]
    caplog.set_level(logging.DEBUG)
    with FakeChatServer(script) as server:
        client = LiteLLMClient("openai/fake", api_base=server.url, api_key=sentinel,
                               retry_policy=FAST)
        response = client.complete(HELLO)
        with pytest.raises(LLMRequestError) as info:
            client.complete(HELLO)
    assert server.requests[0].authorization == f"Bearer {sentinel}"  # it was really sent
    persisted = [repr(client), str(client.describe()), repr(response), str(info.value),
                 repr(info.value), caplog.text, *capsys.readouterr()]
    assert "retrying" in caplog.text  # the transient failure was logged ...
    for text in persisted:
        assert sentinel not in text  # ... but scrubbed
        assert sentinel[-8:] not in text
    assert info.value.__cause__ is None and info.value.__context__ is None


def test_provider_semaphore_bounds_concurrency():
    with FakeChatServer(default="Go(1);", latency_s=0.3) as server:
        client = make_client(server, max_concurrent=2)
        threads = [threading.Thread(target=client.complete, args=(HELLO,)) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert len(server.requests) == 6
    assert server.max_in_flight == 2


def test_local_server_needs_no_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeChatServer(["Go(4);"]) as server:
        client = LiteLLMClient("openai/local", api_base=server.url, retry_policy=FAST)
        assert client.complete(HELLO).text == "Go(4);"


def test_server_busy_time_excludes_its_scripted_latency():
    with FakeChatServer(["Go(1);", Delay(0.3, then="Go(2);")], latency_s=0.2) as server:
        client = make_client(server)
        client.complete(HELLO)
        client.complete(HELLO)
    assert 0.0 < server.busy_s < 0.2


def test_a_lone_surrogate_in_a_reply_is_replaced_and_noted():
    with FakeChatServer(['Go(1);\ud800']) as server:
        response = make_client(server).complete(HELLO)
    assert response.text == "Go(1);\ufffd"
    assert response.notes == ("reply: a lone surrogate U+D800 at character 6 was replaced with "
                              "U+FFFD (it cannot be sent as UTF-8)",)


def test_text_that_cannot_be_encoded_fails_at_once_as_a_request_error():
    """Our own unencodable text is not a transient provider fault: no retry, no 'outage'."""
    with FakeChatServer(default="Go(1);") as server:
        with pytest.raises(LLMRequestError, match="surrogates not allowed"):
            make_client(server).complete([user_message("odd \ud800")])
    assert server.requests == []


@pytest.mark.parametrize("malformed", [{"choices": []}, {"foo": 1}, "just text"])
def test_a_malformed_reply_is_a_transient_failure(malformed):
    with FakeChatServer([Payload(malformed)] * 3) as server:
        with pytest.raises(LLMUnavailable, match="still failing after 3 attempts"):
            make_client(server).complete(HELLO)
    assert len(server.requests) == 3


def test_a_reply_without_choices_then_a_good_one_counts_one_retry():
    with FakeChatServer([Payload({"choices": []}), "Go(2);"]) as server:
        response = make_client(server).complete(HELLO)
    assert response.text == "Go(2);" and response.retries == 1


def dialect_client(server: FakeChatServer, dialect: str) -> LiteLLMClient:
    if dialect == "openai":
        return make_client(server)
    return LiteLLMClient("anthropic/claude-fake", api_base=server.root_url, api_key="test-key",
                         retry_policy=FAST, timeout_s=5.0)


@pytest.mark.parametrize("dialect", ["openai", "anthropic"])
@pytest.mark.parametrize("byte", [b"\xff", b"\xc3", b"\x80"])  # a cut character: \xc3
def test_a_reply_that_is_not_utf8_is_retried_as_a_bad_reply(dialect, byte, caplog):
    """One invalid byte in a 200 was taken for our own encoding error, which stopped the run."""
    with FakeChatServer([BadBytes("Go(1);", byte), "Go(2);"]) as server:
        with caplog.at_level(logging.WARNING, logger="llm_aai.llm.retry"):
            response = dialect_client(server, dialect).complete(HELLO)
    assert response.text == "Go(2);" and response.retries == 1
    assert response.unanswered == 1  # it came back, so it may be billed: a budget charges it
    assert len(server.requests) == 2
    assert "is not UTF-8" in caplog.text and "attempt 1/3" in caplog.text


def test_replies_that_stay_unreadable_are_an_outage_not_a_refused_request():
    with FakeChatServer([BadBytes()] * 3) as server:
        with pytest.raises(LLMUnavailable, match="still failing after 3 attempts") as info:
            make_client(server).complete(HELLO)
    assert "is not UTF-8" in str(info.value) and "b'\\xff'" in str(info.value)
    assert info.value.unanswered == 3 and len(server.requests) == 3


def test_the_bad_bytes_fault_refuses_a_byte_that_is_utf8():
    with pytest.raises(ValueError, match="is valid UTF-8"):
        BadBytes(byte=b"a")


def test_the_timeout_bounds_the_whole_call_not_each_read():
    # ~250 bytes at 0.05 s a byte: 12 s for the body, though no read waits longer than 0.05 s
    with FakeChatServer([Trickle(0.05), Trickle(0.05)]) as server:
        client = make_client(server, timeout_s=1.0, retry_policy=RetryPolicy(
            max_attempts=2, initial_wait_s=0.01, jitter=False, timeout_retries=1))
        started = time.monotonic()
        with pytest.raises(LLMUnavailable, match=r"not retried again.*CallTimeout: .*within 1 s"):
            client.complete(HELLO)
        took = time.monotonic() - started
    assert len(server.requests) == 2
    assert took < 4.0, took  # two attempts of 1 s and the backoff between them


def test_a_reply_within_the_timeout_is_unaffected_by_the_deadline():
    with FakeChatServer([Trickle(0.001, "Go(4);")]) as server:
        response = make_client(server, timeout_s=5.0).complete(HELLO)
    assert response.text == "Go(4);" and response.retries == 0


HOSTILE = "bad \x1b]52;c;ZXZpbA==\x07key\x1b[2J\x1b[H\x9b31m \x07 end"
"""A clipboard write (OSC 52), a screen clear, a cursor move, a C1 CSI and a bell."""


def test_a_servers_error_message_loses_its_escape_sequences():
    with FakeChatServer([HTTPError(400, HOSTILE)]) as server:
        with pytest.raises(LLMRequestError) as raised:
            make_client(server).complete(HELLO)
    message = str(raised.value)
    assert "bad key" in message and "end" in message
    assert not any(ord(char) < 32 or 0x7f <= ord(char) <= 0x9f for char in message), message


def test_a_reply_loses_its_escape_sequences_and_says_so():
    with FakeChatServer([f'Think("{HOSTILE}");\tGo(1);\n']) as server:
        response = make_client(server).complete(HELLO)
    assert response.text == 'Think("bad key31m  end");\tGo(1);\n'
    assert response.notes == ("reply: 5 control character(s) or terminal escape sequence(s) "
                              "removed",)


def test_a_host_name_without_an_address_fails_at_once_naming_it():
    """A mistyped --api-base host: not six retries and relaunches, one clear error."""
    client = LiteLLMClient("openai/fake", api_base="http://nonexistent.invalid:1234/v1",
                           api_key="test-key", timeout_s=5.0)  # the default 6 retries
    started = time.monotonic()
    with pytest.raises(UnresolvedHost) as raised:
        client.complete(HELLO)
    assert time.monotonic() - started < 5
    assert isinstance(raised.value, LLMRequestError) and raised.value.host == "nonexistent.invalid"
    assert str(raised.value).startswith("openai/fake: the host nonexistent.invalid has no address")
    assert str(raised.value).endswith("check the host name of --api-base")


def test_a_refused_connection_is_still_retried():
    import socket

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = LiteLLMClient("openai/fake", api_base=f"http://127.0.0.1:{port}/v1",
                           api_key="test-key", retry_policy=FAST, timeout_s=5.0)
    with pytest.raises(LLMUnavailable) as raised:
        client.complete(HELLO)
    assert raised.value.attempts == FAST.max_attempts


OFFLINE = "nodename nor servname provided, or not known"  # macOS's EAI_NONAME, offline too


def test_a_host_that_answered_before_and_then_has_no_address_is_retried(monkeypatch):
    """A Wi-Fi drop mid-run: the resolver says 'no address' (EAI_NONAME), then comes back."""
    import socket

    resolve = socket.getaddrinfo
    lookups = {"offline": 0}

    def getaddrinfo(host, *args, **kwargs):
        if host == "model-host.test":
            if lookups["offline"]:
                lookups["offline"] -= 1
                raise socket.gaierror(socket.EAI_NONAME, OFFLINE)
            host = "127.0.0.1"
        return resolve(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    with FakeChatServer(["Go(1);", Drop(), "Go(2);"]) as server:
        port = server.url.split(":")[-1].split("/")[0]
        client = LiteLLMClient("openai/fake", api_base=f"http://model-host.test:{port}/v1",
                               api_key="test-key", timeout_s=5.0,
                               retry_policy=dataclasses.replace(FAST, max_attempts=5))
        assert client.complete(HELLO).text == "Go(1);"
        lookups["offline"] = 2  # the pooled connection drops; two lookups find no address
        response = client.complete(HELLO)
    assert response.text == "Go(2);" and response.retries == 3


def test_an_offline_resolver_at_the_first_call_is_still_a_configuration_error(monkeypatch):
    """No call to the host has succeeded: a mistyped host cannot be told from a Wi-Fi drop."""
    import socket

    def getaddrinfo(host, *args, **kwargs):
        raise socket.gaierror(socket.EAI_NONAME, OFFLINE)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    client = LiteLLMClient("openai/fake", api_base="http://never-answered.test:1234/v1",
                           api_key="test-key", retry_policy=FAST, timeout_s=5.0)
    with pytest.raises(UnresolvedHost, match=f"never-answered.test has no address \\({OFFLINE}"):
        client.complete(HELLO)
