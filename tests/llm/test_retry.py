from __future__ import annotations

import random
import traceback
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from llm_aai.llm import LLMUnavailable, RetryPolicy, is_transient, retry_after_seconds
from llm_aai.llm.retry import call_with_retries, describe_error, unresolved_host


class FakeStatusError(Exception):
    def __init__(self, status_code, headers=None):
        super().__init__(f"status {status_code}")
        self.status_code = status_code
        self.litellm_response_headers = headers or {}


class RateLimitError(FakeStatusError):
    """Named like litellm's class: classification goes by class name."""


class AuthenticationError(FakeStatusError):
    pass


def test_retry_after_formats():
    assert retry_after_seconds(FakeStatusError(429, {"Retry-After": "2.5"})) == 2.5
    assert retry_after_seconds(FakeStatusError(429, {"retry-after-ms": "1500"})) == 1.5
    when = datetime.now(UTC) + timedelta(seconds=30)
    parsed = retry_after_seconds(FakeStatusError(429, {"Retry-After": format_datetime(when)}))
    assert 25 <= parsed <= 31
    assert retry_after_seconds(FakeStatusError(429)) is None


@pytest.mark.parametrize("header", ["30s", "soon", "", "nan", "Mon, 99 Foo 2020 00:00:00 GMT"])
def test_an_unreadable_retry_after_falls_back_to_the_backoff(header):
    exc = RateLimitError(429, {"Retry-After": header})
    assert retry_after_seconds(exc) is None
    policy = RetryPolicy(initial_wait_s=0.5, jitter=False)
    assert policy.wait(2, exc, random.Random(0)) == 1.0


def test_classification():
    assert is_transient(RateLimitError(429))
    assert is_transient(FakeStatusError(502))
    assert not is_transient(AuthenticationError(401))
    assert not is_transient(FakeStatusError(400))
    assert not is_transient(ValueError("bug"))


@given(attempt=st.integers(1, 30), initial=st.floats(0, 10), cap=st.floats(0, 100),
       seed=st.integers(0, 2**32))
def test_backoff_is_bounded_and_jittered(attempt, initial, cap, seed):
    policy = RetryPolicy(initial_wait_s=initial, max_wait_s=cap)
    wait = policy.wait(attempt, None, random.Random(seed))
    backoff = min(cap, initial * 2 ** (attempt - 1))
    assert backoff / 2 <= wait <= backoff <= cap


@given(asked=st.floats(0, 1e6), cap=st.floats(0, 100))
def test_retry_after_is_honoured_up_to_the_cap(asked, cap):
    policy = RetryPolicy(max_wait_s=cap)
    exc = RateLimitError(429, {"Retry-After": repr(asked)})
    assert policy.wait(1, exc, random.Random(0)) == min(asked, cap)


def test_counts_retries_and_sleeps_as_told():
    outcomes = [RateLimitError(429, {"Retry-After": "7"}), FakeStatusError(503), "ok"]
    slept = []

    def fn():
        item = outcomes.pop(0)
        if isinstance(item, Exception):
            raise item
        return item

    policy = RetryPolicy(max_attempts=5, initial_wait_s=1.0, jitter=False)
    assert call_with_retries(fn, policy, sleep=slept.append) == ("ok", 2)
    assert slept == [7.0, 2.0]


def test_non_transient_raised_at_once_and_exhaustion_wraps():
    calls = []

    def auth():
        calls.append(1)
        raise AuthenticationError(401)

    with pytest.raises(AuthenticationError):
        call_with_retries(auth, RetryPolicy(), sleep=lambda s: None)
    assert len(calls) == 1

    def down():
        raise FakeStatusError(500)

    with pytest.raises(LLMUnavailable) as info:
        call_with_retries(down, RetryPolicy(max_attempts=3), sleep=lambda s: None)
    assert info.value.attempts == 3 and info.value.__context__ is None


def test_a_local_encoding_error_is_not_a_provider_fault():
    """litellm wraps a UnicodeEncodeError from building the request in a 500."""
    try:
        try:
            "\ud800".encode()
        except UnicodeEncodeError as local:
            raise FakeStatusError(500) from local
    except FakeStatusError as wrapped:
        assert not is_transient(wrapped)
    assert is_transient(FakeStatusError(500))


class APIConnectionError(FakeStatusError):
    """Named like litellm's class, whose unmapped errors carry the Python traceback."""


def _litellm_style_error() -> APIConnectionError:
    try:
        {}["choices"]
    except KeyError as error:
        trace = traceback.format_exc()
        message = f"litellm.APIConnectionError: bad response {error}\n{trace}"
    exc = APIConnectionError(500)
    exc.args = (message,)
    return exc


def test_the_failure_keeps_the_first_line_and_the_status_not_the_trace():
    """This text becomes a result's infra_error."""
    def fail():
        raise _litellm_style_error()

    policy = RetryPolicy(max_attempts=2, initial_wait_s=0, jitter=False)
    with pytest.raises(LLMUnavailable) as info:
        call_with_retries(fail, policy, describe="fake call", sleep=lambda s: None)
    assert str(info.value) == (
        "fake call still failing after 2 attempts: APIConnectionError: "
        "litellm.APIConnectionError: bad response 'choices' (HTTP status 500)")
    assert describe_error(ValueError("")) == "ValueError"


def _wrapped(cause: BaseException) -> Exception:
    """``cause`` under a connection error under a 500, as litellm wraps a failed connect."""
    try:
        try:
            raise cause
        except BaseException as inner:
            raise ConnectionError("Connection error.") from inner
    except ConnectionError as connect:
        error = FakeStatusError(500)
        error.__cause__ = connect
        return error


def test_a_host_name_without_an_address_is_not_transient():
    import socket

    missing = _wrapped(socket.gaierror(socket.EAI_NONAME, "Name or service not known"))
    assert not is_transient(missing)
    assert unresolved_host(missing) == (None, "Name or service not known")
    # a resolver out of reach, a refused connection (a server restarting) are retried
    again = _wrapped(socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution"))
    assert is_transient(again) and unresolved_host(again) is None
    assert is_transient(_wrapped(ConnectionRefusedError(111, "Connection refused")))
