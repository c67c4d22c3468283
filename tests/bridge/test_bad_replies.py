"""A reply from animalai that is not a message the player can read is bad input (status 3).

These tests stand in for animalai's gRPC server (Python is the server in ML-Agents) with one
that answers the player's calls with raw bytes of their choosing, and run the real player
(``python -m llm_aai.bridge serve``) against it. Before, garbage, a truncated message or one
over gRPC's 4 MiB limit ended the player with status 0 and "animalai went away", as if the
user had closed the environment; a message of another type parsed with no header and was
taken for a close.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable
from concurrent import futures
from contextlib import contextmanager

import grpc
import pytest

from llm_aai.bridge.wire import unity_wire_pb2 as wire
from tests.bridge.conftest import free_port

SERVICE = "communicator_objects.UnityToExternalProto"
FOUR_MIB = 4 * 1024 * 1024


def handshake_reply() -> bytes:
    """What mlagents_envs answers the player's first message with."""
    init = wire.UnityRLInitializationInputProto(seed=1, communication_version="1.5.0",
                                                package_version="1.0.0", num_areas=1)
    return wire.UnityMessageProto(
        header=wire.HeaderProto(status=200),
        unity_input=wire.UnityInputProto(rl_initialization_input=init)).SerializeToString()


def reset_reply() -> bytes:
    """A first RESET, as the client sends it (here with no arena)."""
    message = wire.UnityMessageProto(header=wire.HeaderProto(status=200))
    message.unity_input.rl_input.command = 1
    message.unity_input.rl_input.side_channel = b"\x00" * 8
    return message.SerializeToString()


def _over_the_limit() -> bytes:
    message = wire.UnityMessageProto(header=wire.HeaderProto(status=200))
    message.unity_input.rl_input.side_channel = b"\x00" * (FOUR_MIB + 16)
    return message.SerializeToString()


BAD_REPLIES: dict[str, Callable[[], bytes]] = {
    "garbage": lambda: b"\xff\xfe not a protobuf message \x00\x01",
    "truncated": lambda: reset_reply()[:-3],
    "over 4 MiB": _over_the_limit,
    # Other messages of the protocol: one whose fields clash with UnityMessageProto's, and
    # one that parses (its fields are unknown ones) with no header.
    "wrong type, header": lambda: wire.HeaderProto(status=200, message="hello").SerializeToString(),
    "wrong type, init input": lambda: wire.UnityRLInitializationInputProto(
        seed=7, num_areas=1).SerializeToString(),
    "empty": lambda: b"",
    "unknown status": lambda: wire.UnityMessageProto(
        header=wire.HeaderProto(status=500)).SerializeToString(),
}
REASONS = {
    "garbage": "does not parse",
    "truncated": "does not parse",
    "over 4 MiB": "4 MiB",
    "wrong type, header": "does not parse",
    "wrong type, init input": "no header",
    "empty": "no header",
    "unknown status": "status 500",
}


class StandIn:
    """animalai's side of the wire: answers each call with the next of ``replies``.

    A reply of None closes the server instead (``server.stop``), as ``env.close()`` and a
    dying client do: the pending call is cancelled.
    """

    def __init__(self, replies: list[bytes | None]) -> None:
        self.replies = list(replies)
        self.calls = 0
        self.closing = threading.Event()
        self.stopped = threading.Event()
        self.port = free_port()
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        handler = grpc.unary_unary_rpc_method_handler(self._exchange)  # raw bytes both ways
        self.server.add_generic_rpc_handlers(
            [grpc.method_handlers_generic_handler(SERVICE, {"Exchange": handler})])
        self.server.add_insecure_port(f"localhost:{self.port}")

    def stop(self) -> None:
        self.server.stop(grace=0).wait(30)
        self.stopped.set()

    def _exchange(self, request: bytes, context) -> bytes:
        self.calls += 1
        reply = self.replies.pop(0) if self.replies else None
        if reply is None:
            self.closing.set()
            self.stopped.wait(30)  # held until the server stops, which cancels the call
            return b""
        return reply


@contextmanager
def stand_in(replies: list[bytes | None]):
    server = StandIn(replies)
    server.server.start()
    try:
        yield server
    finally:
        server.stop()


def run_player(server: StandIn, *, stop_when_closing: bool = False) -> subprocess.CompletedProcess:
    player = subprocess.Popen(
        [sys.executable, "-m", "llm_aai.bridge", "serve", "--mlagents-port", str(server.port),
         "--playerMode", "0", "--resolution", "16"],
        env={**os.environ, "LLM_AAI_BRIDGE_IDLE_TIMEOUT": "30"},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        if stop_when_closing:
            assert server.closing.wait(60), "the player never made its second call"
            server.stop()
        stdout, stderr = player.communicate(timeout=60)
    finally:
        if player.poll() is None:  # a failed wait above: no player outlives its test
            player.kill()
            player.communicate()
    return subprocess.CompletedProcess(player.args, player.returncode, stdout, stderr)


def _assert_one_line_reason(result: subprocess.CompletedProcess, reason: str) -> None:
    assert result.returncode == 3, result.stderr
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1, result.stderr
    assert errors[0].startswith("[llm-aai bridge] error: ")
    assert reason in errors[0]
    assert "went away" not in result.stderr
    # nothing but the bridge's own lines (no gRPC or protobuf chatter)
    assert all(line.startswith("[llm-aai bridge] ") for line in result.stderr.splitlines())


@pytest.mark.parametrize("kind", BAD_REPLIES)
def test_a_bad_reply_to_the_handshake_is_bad_input(kind):
    with stand_in([BAD_REPLIES[kind]()]) as server:
        result = run_player(server)
    _assert_one_line_reason(result, REASONS[kind])
    assert "handshake" in result.stderr


@pytest.mark.parametrize("kind", BAD_REPLIES)
def test_a_bad_input_after_the_handshake_is_bad_input(kind):
    with stand_in([handshake_reply(), BAD_REPLIES[kind]()]) as server:
        result = run_player(server)
    assert server.calls == 2
    _assert_one_line_reason(result, REASONS[kind])


def test_a_client_that_closes_the_channel_still_ends_the_player_with_0():
    with stand_in([handshake_reply(), None]) as server:
        result = run_player(server, stop_when_closing=True)
    assert result.returncode == 0, result.stderr
    assert "animalai went away" in result.stderr
    assert "error:" not in result.stderr


def test_a_close_message_ends_the_player_with_0():
    close = wire.UnityMessageProto(header=wire.HeaderProto(status=400)).SerializeToString()
    with stand_in([handshake_reply(), close]) as server:
        result = run_player(server)
    assert result.returncode == 0, result.stderr
    assert "error:" not in result.stderr
