"""A run's stop ends a model call's wait (for a slot, for the rate window, between tries)
at once, and the call is never sent: real clients against the fake server over HTTP."""

from __future__ import annotations

import threading
import time

from llm_aai.llm import LiteLLMClient, RetryPolicy
from llm_aai.llm.call_stop import POLL_S, CallCancelled, calls_stop_when
from llm_aai.llm.fake_server import Delay, FakeChatServer, RateLimit
from llm_aai.llm.types import user_message

HELLO = [user_message("hello")]
PATIENT = RetryPolicy(max_attempts=3, initial_wait_s=0.01, max_wait_s=60.0, jitter=False)


def _call_until_stopped(client: LiteLLMClient, stop: threading.Event,
                        after_s: float) -> tuple[BaseException | None, float]:
    """Call in a thread whose run stops ``after_s`` into the call; what it raised, and how
    long after the stop it returned."""
    outcome: list = []

    def call() -> None:
        with calls_stop_when(stop.is_set):
            try:
                client.complete(HELLO)
                outcome.append(None)
            except BaseException as error:  # noqa: BLE001 - handed to the test
                outcome.append(error)

    thread = threading.Thread(target=call)
    thread.start()
    time.sleep(after_s)
    stop.set()
    stopped = time.monotonic()
    thread.join(timeout=60)
    return outcome[0], time.monotonic() - stopped


def test_a_stop_ends_the_wait_for_the_rate_window_and_sends_nothing(monkeypatch):
    from llm_aai.llm import provider_limits

    monkeypatch.setattr(provider_limits, "WINDOW_S", 60.0)
    with FakeChatServer(default="Go(1);") as server:
        client = LiteLLMClient("openai/fake", api_base=server.url, retry_policy=PATIENT,
                               max_concurrent=4, requests_per_minute=1)
        client.complete(HELLO)  # the window's one call: the next waits about a minute
        error, took = _call_until_stopped(client, threading.Event(), after_s=0.5)
    assert isinstance(error, CallCancelled)
    assert took < 2.0  # heard within a poll, not after the window (generous for a busy CI)
    assert len(server.requests) == 1


def test_a_stop_ends_the_wait_for_a_slot_and_sends_nothing():
    with FakeChatServer([Delay(5.0)], default="Go(1);") as server:
        client = LiteLLMClient("openai/fake", api_base=server.url, retry_policy=PATIENT,
                               max_concurrent=1)
        busy = threading.Thread(target=client.complete, args=(HELLO,))
        busy.start()  # holds the one slot for 5 s
        while not server.requests:
            time.sleep(0.01)
        error, took = _call_until_stopped(client, threading.Event(), after_s=0.5)
        busy.join(timeout=30)
    assert isinstance(error, CallCancelled)
    assert took < 2.0 + POLL_S
    assert len(server.requests) == 1  # only the call that held the slot


def test_a_stop_ends_the_wait_between_tries_and_sends_no_retry():
    with FakeChatServer([RateLimit(retry_after=30)], default="Go(1);") as server:
        client = LiteLLMClient("openai/fake", api_base=server.url, retry_policy=PATIENT,
                               max_concurrent=4)
        error, took = _call_until_stopped(client, threading.Event(), after_s=1.0)
    assert isinstance(error, CallCancelled)
    assert took < 2.0
    assert len(server.requests) == 1  # the 429, and no retry after the stop


def test_without_a_stop_the_same_wait_runs_its_course():
    """Where no run states a stop (a client on its own) the wait is the plain pause."""
    with FakeChatServer([RateLimit(retry_after=1.5)], default="Go(1);") as server:
        client = LiteLLMClient("openai/fake", api_base=server.url, retry_policy=PATIENT,
                               max_concurrent=4)
        reply = client.complete(HELLO)
    assert reply.text == "Go(1);" and reply.retries == 1
    told, retried = (request.received_at for request in server.requests)
    assert retried - told >= 1.5
