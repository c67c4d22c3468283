"""The fake chat server's own limits on what a client sends it."""

from __future__ import annotations

import http.client
import json

import pytest

from llm_aai.llm.fake_server import MAX_BODY_BYTES, FakeChatServer


def _post(server: FakeChatServer, length: str, body: bytes = b"") -> tuple[int, dict]:
    host, port = server.root_url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        connection.putrequest("POST", "/v1/chat/completions")
        connection.putheader("Content-Length", length)
        connection.endheaders(body)
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


@pytest.mark.parametrize("length, status", [
    ("abc", 400), ("-5", 400), ("1e3", 400), ("0x10", 400), (str(MAX_BODY_BYTES + 1), 413),
    (str(10**30), 413),
])
def test_a_body_length_that_is_no_number_or_too_big_is_refused_before_reading(length, status,
                                                                               capfd):
    """Before, 'abc' raised in the handler (a traceback on the server's stderr, no answer),
    and a negative or huge length had it wait for bytes that never came."""
    with FakeChatServer(default="Go(1);") as server:
        answer = _post(server, length)
        good = _post(server, "2", b"{}")
    assert answer[0] == status and "Content-Length" in answer[1]["error"]["message"]
    assert good[0] == 200 and good[1]["choices"][0]["message"]["content"] == "Go(1);"
    assert len(server.requests) == 1  # the refused one used no reply of the script
    assert "Traceback" not in capfd.readouterr().err


@pytest.mark.parametrize("body, says", [
    ([], "the body is a JSON list"),
    ("x", "the body is a JSON str"),
    ({"messages": 5}, "messages is not a list"),
    ({"messages": ["hi"]}, "message 1 is not an object"),
    ({"messages": [{"role": "user", "content": [1]}]}, "message 1's content"),
    ({"system": 5, "messages": []}, "system is neither"),
    ({"max_tokens": "x", "messages": []}, "max_tokens is not a whole number"),
    ({"max_tokens": True, "messages": []}, "max_tokens is not a whole number"),
])
def test_a_body_of_a_shape_no_client_sends_is_a_400_not_a_traceback(body, says, capfd):
    """Before, these raised in the handler while counting tokens (max_tokens only with a
    context window): a traceback on the server's stderr, no answer."""
    data = json.dumps(body).encode()
    with FakeChatServer(default="Go(1);") as server:
        answer = _post(server, str(len(data)), data)
    assert answer[0] == 400 and says in answer[1]["error"]["message"]
    assert server.requests == []  # refused before the script
    assert "Traceback" not in capfd.readouterr().err
