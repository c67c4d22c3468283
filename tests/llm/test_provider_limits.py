"""A provider's limits as one process's clients share them (``llm_aai.llm.provider_limits``):
calls per window, and a 429's Retry-After holding back every thread's calls."""

from __future__ import annotations

import threading
import time

import pytest

from llm_aai.llm import LiteLLMClient, RetryPolicy
from llm_aai.llm.fake_server import FakeChatServer, RateLimit
from llm_aai.llm.provider_limits import RollingWindow
from llm_aai.llm.types import user_message

HELLO = [user_message("hello")]
FAST = RetryPolicy(max_attempts=3, initial_wait_s=0.01, max_wait_s=5.0, jitter=False)


def most_in_any_window(times: list[float], window_s: float) -> int:
    """The most of ``times`` in any half-open span [t, t + window_s)."""
    times = sorted(times)
    return max((sum(start <= t < start + window_s for t in times) for start in times),
               default=0)


def test_the_rolling_window_never_lets_more_than_its_limit_into_any_window():
    window, now, starts = RollingWindow(3, 10.0), 0.0, []
    for _ in range(12):  # callers that start as soon as they are let, calls of 1 s
        now += window.delay(now)
        window.begin()
        starts.append(now)
        now += 1.0
        window.end(now)
    assert most_in_any_window(starts, 10.0) == 3
    assert starts[3] == pytest.approx(starts[0] + 1.0 + 10.0)  # a window after the first ended


def test_calls_in_flight_count_until_they_end():
    window = RollingWindow(2, 10.0)
    window.begin()
    window.begin()
    assert window.delay(100.0) > 0  # however long ago they started: the provider may not have
    window.end(100.0)               # seen them yet
    assert window.delay(105.0) == pytest.approx(5.0)


def test_a_rate_limit_below_one_is_refused():
    with pytest.raises(ValueError, match=">= 1 call"):
        RollingWindow(0, 60.0)


def _threads_call(client: LiteLLMClient, count: int) -> None:
    threads = [threading.Thread(target=client.complete, args=(HELLO,)) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)


def test_the_threads_of_a_process_share_one_rate_limit(monkeypatch):
    from llm_aai.llm import provider_limits

    monkeypatch.setattr(provider_limits, "WINDOW_S", 1.5)  # a short "minute"
    with FakeChatServer(default="Go(1);") as server:
        clients = [LiteLLMClient("openai/fake", api_base=server.url, retry_policy=FAST,
                                 max_concurrent=4, requests_per_minute=2) for _ in range(2)]
        threads = [threading.Thread(target=_threads_call, args=(client, 3))
                   for client in clients]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
    arrived = [request.received_at for request in server.requests]
    assert len(arrived) == 6
    assert most_in_any_window(arrived, 1.5) <= 2  # two clients, six threads, one limit
    assert max(arrived) - min(arrived) >= 2 * 1.5  # 6 calls at 2 a window: two windows passed


def test_a_429_with_retry_after_holds_back_every_thread(caplog):
    with FakeChatServer([RateLimit(retry_after=2)], default="Go(1);") as server:
        client = LiteLLMClient("openai/fake", api_base=server.url, retry_policy=FAST,
                               max_concurrent=4)
        limited = threading.Thread(target=client.complete, args=(HELLO,))
        limited.start()
        deadline = time.monotonic() + 30
        while "retrying in" not in caplog.text and time.monotonic() < deadline:
            time.sleep(0.01)  # until the 429 is back at its client
        _threads_call(client, 3)  # other threads' calls, after it
        limited.join(timeout=30)
    told = server.requests[0].received_at
    later = [request.received_at for request in server.requests[1:]]
    assert len(later) == 4  # the limited call's retry and the three others
    assert min(later) >= told + 2  # none went out before the pause ended
