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
