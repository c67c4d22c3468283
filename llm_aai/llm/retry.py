"""The one retry policy for model calls: transient errors only, bounded, Retry-After aware.

litellm's own retries (and the OpenAI SDK's) are switched off so that this is the only
place that decides whether and when to call again; the count of retries is reported
with each response and in the logs.
"""

from __future__ import annotations

import email.utils
import logging
import math
import random
import socket
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TypeVar

from tenacity import (
    RetryCallState,
    RetryError,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    stop_after_delay,
    stop_any,
)

from llm_aai.llm.errors import LLMUnavailable
from llm_aai.llm.sanitize import strip_control

__all__ = ["DEFAULT_MAX_RETRIES", "RetryPolicy", "call_with_retries", "connect_failed",
           "describe_error", "is_timeout", "is_transient", "retry_after_seconds",
           "unreadable_reply", "unresolved_host"]

log = logging.getLogger(__name__)
T = TypeVar("T")

DEFAULT_MAX_RETRIES = 6
"""Retries of a model call after its first try: what ``--max-retries`` documents, and the
default of the client and of ``RetryPolicy`` alike (the paper retried 3 times; long runs on
busy providers need more patience, and each retry is reported)."""

#: HTTP statuses worth another try: timeout, conflict/too early, rate limit, 5xx.
TRANSIENT_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})


NAME_NOT_FOUND = frozenset(code for code in (getattr(socket, "EAI_NONAME", None),
                                             getattr(socket, "EAI_NODATA", None))
                           if code is not None)
"""``getaddrinfo``'s answers that a host name has no address: the name is mistyped (or the
machine resolves no names at all), and asking again gets the same answer. An offline resolver
says it too (macOS on a Wi-Fi drop): the client retries it for a host it has had replies
from (``LostHost``). A resolver that
could not be reached says ``EAI_AGAIN`` ("Temporary failure in name resolution"), which
stays transient, as does a refused or dropped connection (a server restarting)."""


def is_transient(exc: BaseException) -> bool:
    """Tell whether ``exc`` is worth a retry: rate limits, drops, timeouts, 5xx.

    litellm's exception classes are checked by name through the MRO so this module
    does not import litellm (slow) and also recognises the OpenAI SDK's own classes.
    """
    if _caused_by_encoding(exc):
        return False  # our own text failed to encode: no provider was reached
    if unresolved_host(exc) is not None:
        return False  # the host's name has no address: a configuration error
    names = {cls.__name__ for cls in type(exc).__mro__}
    if names & {"AuthenticationError", "PermissionDeniedError", "NotFoundError",
                "BadRequestError", "UnprocessableEntityError", "UnsupportedParamsError"}:
        return False
    if names & {"RateLimitError", "APIConnectionError", "Timeout", "APITimeoutError",
                "InternalServerError", "ServiceUnavailableError", "BadGatewayError",
                "ConnectError", "ReadTimeout", "RemoteProtocolError", "TimeoutError",
                "ConnectionError", "MalformedReply", "CallTimeout", "LostHost"}:
        return True
    status = getattr(exc, "status_code", None)
    return isinstance(status, int) and status in TRANSIENT_STATUS


def unresolved_host(exc: BaseException) -> tuple[str | None, str] | None:
    """The host whose name has no address, under ``exc``, and the resolver's words; or None.

    litellm wraps the lookup's ``socket.gaierror`` (in httpx's and the OpenAI SDK's
    connection errors) in an ``InternalServerError``; the cause chain holds it, and the
    request the host was asked for: the innermost error's (litellm's own carries a stand-in
    request to the provider's default host); None when no error carries one.
    """
    host, failed = None, None
    for current in _causes(exc):
        if (isinstance(current, socket.gaierror) and current.errno in NAME_NOT_FOUND
                and failed is None):
            failed = current.strerror or str(current)
        host = _request_host(current) or host
    return None if failed is None else (host, failed)


def _request_host(exc: BaseException) -> str | None:
    """The host of the HTTP request an httpx or OpenAI SDK error carries, if any."""
    try:  # httpx raises RuntimeError for an error raised without its request
        request = getattr(exc, "request", None)
    except RuntimeError:
        return None
    host = getattr(getattr(request, "url", None), "host", None)
    return host if isinstance(host, str) and host else None


def _causes(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and each exception it was raised from (litellm wraps), once each."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        yield current
        seen.add(id(current))
        current = current.__cause__ or current.__context__


def _caused_by_encoding(exc: BaseException) -> bool:
    """Whether a local text encoding error lies under ``exc``.

    litellm wraps whatever its provider code raises, a ``UnicodeEncodeError`` from building
    the request included, in an ``InternalServerError`` with status 500; retrying it cannot
    help, and counting it against the provider would be wrong. A ``UnicodeDecodeError`` is
    not ours: it is the reply's (``unreadable_reply``).
    """
    return any(isinstance(current, UnicodeEncodeError) for current in _causes(exc))


def unreadable_reply(exc: BaseException) -> str | None:
    """Why the reply under ``exc`` could not be read, when a reply came; else None.

    litellm wraps both kinds in an ``InternalServerError`` with status 500, though the server
    answered 200: a body that is not UTF-8 (the ``UnicodeDecodeError``, wrapped as an encoding
    error of the request is) and one its parser refused ("Invalid response object": a usage
    count that is a string or NaN, no choices list). A bad reply, as one holding no choice.
    """
    for current in _causes(exc):
        if isinstance(current, UnicodeDecodeError):
            byte = current.object[current.start:current.start + 1]
            return f"it is not UTF-8 ({current.reason}: {bytes(byte)!r} at byte {current.start})"
    causes = list(_causes(exc))
    if any(str(current).startswith("Invalid response object") for current in causes):
        said = strip_control(str(causes[-1]))[0].strip().splitlines()
        return f"litellm could not parse it ({' '.join(line.strip() for line in said[:3])})"
    return None


def _headers_of(exc: BaseException) -> list[Mapping[str, str]]:
    found: list[Mapping[str, str]] = []
    for attr in ("litellm_response_headers", "headers"):
        value = getattr(exc, attr, None)
        if value:
            found.append(value)
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers:
        found.append(headers)
    return found


def retry_after_seconds(exc: BaseException, now: float | None = None) -> float | None:
    """Return the wait a server asked for, from ``retry-after-ms`` or ``Retry-After``.

    ``Retry-After`` may be seconds (possibly fractional) or an HTTP date. A header that is
    neither (``30s``, ``soon``) is ignored, so the caller falls back to its own backoff: a
    server's malformed hint must never turn a retry into a crash.
    """
    for headers in _headers_of(exc):
        lower = {str(k).lower(): str(v) for k, v in headers.items()}
        asked = _seconds(lower.get("retry-after-ms"), scale=1000.0)
        if asked is None:
            asked = _seconds(lower.get("retry-after"), now=now)
        if asked is not None:
            return asked
    return None


def _seconds(value: str | None, *, scale: float = 1.0, now: float | None = None) -> float | None:
    """A header's wait in seconds (a number divided by ``scale``, or a date), else None."""
    if not value:
        return None
    try:
        seconds = float(value) / scale
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError, OverflowError):
            log.debug("ignoring an unreadable Retry-After header %r", value[:40])
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    if math.isnan(seconds):
        return None
    return max(0.0, seconds)


@dataclass(frozen=True)
class RetryPolicy:
    """Bounds of the retry loop.

    Attributes:
        max_attempts: total tries including the first (``DEFAULT_MAX_RETRIES`` + 1).
        initial_wait_s: first backoff before jitter.
        max_wait_s: cap on any single wait, including one asked by Retry-After.
        max_total_s: give up once this much time has passed since the first try.
        jitter: full jitter (uniform in [0, backoff]) when True.
        timeout_retries: retries after calls that timed out (0: none). A server does not
            know the client gave up: it goes on generating the abandoned reply, and a server
            with one slot (llama.cpp's default) would make each retry wait behind it, to time
            out in turn. The episode's relaunch (``--max-relaunches``), after its delay,
            plays it again instead.

    """

    max_attempts: int = DEFAULT_MAX_RETRIES + 1
    initial_wait_s: float = 1.0
    max_wait_s: float = 60.0
    max_total_s: float = 600.0
    jitter: bool = True
    timeout_retries: int = 0

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError(f"max_attempts must be >= 1, got {self.max_attempts}")
        if self.initial_wait_s < 0 or self.max_wait_s < 0:
            raise ValueError("retry waits must be non-negative")
        if self.timeout_retries < 0:
            raise ValueError(f"timeout_retries must be >= 0, got {self.timeout_retries}")

    def wait(self, attempt: int, exc: BaseException | None, rng: random.Random) -> float:
        """Seconds to sleep after failed try number ``attempt`` (1-based)."""
        asked = retry_after_seconds(exc) if exc is not None else None
        if asked is not None:
            return min(asked, self.max_wait_s)
        backoff = min(self.max_wait_s, self.initial_wait_s * 2 ** (attempt - 1))
        return rng.uniform(backoff / 2, backoff) if self.jitter else backoff


def call_with_retries(
    fn: Callable[[], T],
    policy: RetryPolicy,
    *,
    describe: str = "model call",
    rng: random.Random | None = None,
    scrub: Callable[[str], str] = lambda text: text,
    sleep: Callable[[float], None] = time.sleep,
) -> tuple[T, int]:
    """Run ``fn`` under ``policy``; return its result and how many retries it took.

    Raises:
        LLMUnavailable: when transient failures outlast the policy.
        Exception: any non-transient error from ``fn``, unchanged and immediately.

    """
    jitter_rng = rng or random.Random()

    def wait(state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        return policy.wait(state.attempt_number, exc, jitter_rng)

    def before_sleep(state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        log.warning("%s failed (attempt %d/%d): %s; retrying in %.2fs", describe,
                    state.attempt_number, policy.max_attempts,
                    scrub(describe_error(exc)), state.upcoming_sleep)

    timeouts = 0

    def timed_out_too_often(state: RetryCallState) -> bool:
        nonlocal timeouts
        exc = state.outcome.exception() if state.outcome else None
        if exc is not None and is_timeout(exc):
            timeouts += 1
        return timeouts > policy.timeout_retries

    retrying = Retrying(
        # the timeout count first: stop_any stops asking at the first condition that holds
        stop=stop_any(timed_out_too_often, stop_after_attempt(policy.max_attempts),
                      stop_after_delay(policy.max_total_s)),
        wait=wait,
        retry=retry_if_exception(is_transient),
        before_sleep=before_sleep,
        sleep=sleep,
        reraise=False,
    )
    failure: LLMUnavailable | None = None
    try:
        for attempt in retrying:
            with attempt:
                result = fn()
            if not attempt.retry_state.outcome.failed:
                return result, attempt.retry_state.attempt_number - 1
    except RetryError as err:
        last = err.last_attempt
        error = scrub(describe_error(last.exception()))
        if timeouts > policy.timeout_retries:
            said = (f"{describe} timed out, and is not retried again (the server may still be "
                    f"generating the reply it was asked for; a retry would wait behind it)")
        else:
            said = f"{describe} still failing after {last.attempt_number} attempts"
        failure = LLMUnavailable(f"{said}: {error}", attempts=last.attempt_number)
    if failure is not None:
        raise failure  # outside the handler: no chained provider exception, no leaked key
    raise AssertionError("unreachable: tenacity neither returned nor raised")


def describe_error(exc: BaseException | None) -> str:
    """One line for a log or a result: the error's type, its message's first line, its status.

    litellm appends the Python traceback to the message of errors it could not map (and
    some providers' bodies run over several lines); a result's ``infra_error`` and a
    warning need what happened, not where in litellm it was noticed. Control characters
    and escape sequences are removed (``strip_control``): the text comes from a server.
    """
    if exc is None:
        return "unknown error"
    # a server's message is printed: its escape sequences must not reach the terminal
    lines = (line.strip() for line in strip_control(str(exc))[0].splitlines())
    first = next((line for line in lines if line), "")
    first = first.split("Traceback (most recent call last)")[0].strip()
    text = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
    unanswered = _no_http_response(exc)
    status = getattr(exc, "status_code", None)
    if unanswered is not None:  # litellm's 408 or 500 is its own label: no server said it
        text += f" ({unanswered}, no HTTP status)"
    elif isinstance(status, int) and not isinstance(status, bool):
        text += f" (HTTP status {status})"
    return text[:500]


# the socket-level causes only: litellm also names an unreadable reply APIConnectionError
_REFUSED = frozenset({"ConnectionRefusedError", "ConnectError", "ConnectionResetError",
                      "RemoteProtocolError"})
_TIMED_OUT = frozenset({"ReadTimeout", "APITimeoutError", "TimeoutError", "ConnectTimeout",
                        "CallTimeout"})


def is_timeout(exc: BaseException) -> bool:
    """Whether ``exc`` is the client's timeout: no whole reply came back in time."""
    return any(names & _TIMED_OUT for names in _cause_names(exc))


_NOT_CONNECTED = frozenset({"ConnectTimeout", "ConnectError", "ConnectionRefusedError"})
"""httpx's (and httpcore's) errors of a connection not made, and the socket's refusal."""


def connect_failed(exc: BaseException) -> bool:
    """Whether the connection failed under ``exc``, so no request went out.

    A timeout while connecting (a host that drops packets) is no timeout of a request sent.
    """
    return any(names & _NOT_CONNECTED for names in _cause_names(exc))


def _cause_names(exc: BaseException) -> Iterator[set[str]]:
    """The class names of ``exc`` and of each exception it was raised from (litellm wraps)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        yield {cls.__name__ for cls in type(current).__mro__}
        seen.add(id(current))
        current = current.__cause__ or current.__context__


def _no_http_response(exc: BaseException) -> str | None:
    """What happened when no HTTP response came back at all, else None.

    litellm labels a client-side timeout HTTP 408 and a refused connection 500, though no
    server sent either: the cause chain holds what really happened.
    """
    for names in _cause_names(exc):
        if names & _TIMED_OUT:
            return "the client's timeout: the server did not answer in time"
        if names & _REFUSED:
            return "no connection to the server"
    return None
