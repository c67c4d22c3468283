"""The one model client: litellm for every provider, wrapped in our retry policy.

litellm is imported on first use (it takes seconds), so importing ``llm_aai`` stays fast
and the non-LLM agents never pay for it.
"""

from __future__ import annotations

import contextvars
import logging
import math
import os
import random
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, TypeVar
from urllib.parse import urlsplit

from llm_aai.llm.aliases import ModelSpec, resolve_model
from llm_aai.llm.call_stop import wait_unless_stopped
from llm_aai.llm.errors import (
    CallTimeout,
    ContextOverflow,
    LLMRequestError,
    LostHost,
    MalformedReply,
    UnresolvedHost,
)
from llm_aai.llm.pricing import Prices
from llm_aai.llm.provider_limits import LEASE_MARGIN_S, local_gate
from llm_aai.llm.quiet_import import import_litellm
from llm_aai.llm.resend import hold_for_resend
from llm_aai.llm.retry import (
    DEFAULT_MAX_RETRIES,
    RetryPolicy,
    call_with_retries,
    connect_failed,
    describe_error,
    is_timeout,
    is_transient,
    retry_after_seconds,
    unreadable_reply,
    unresolved_host,
)
from llm_aai.llm.sanitize import sanitize_reply
from llm_aai.llm.secrets import Secret, redact
from llm_aai.llm.types import LLMResponse, Message
from llm_aai.llm.usage import Tokens, read_usage, warn_once

__all__ = ["DEFAULT_MAX_RETRIES", "DEFAULT_MAX_TOKENS", "DEFAULT_TEMPERATURE", "DEFAULT_TIMEOUT_S",
           "ChatClient", "LiteLLMClient", "ProviderGate"]

# The client's defaults, which the run configuration (and so the run command's flags) takes
# over: one value each, so a run and a client built by hand behave alike.
DEFAULT_TEMPERATURE = 0.0
"""The paper sampled at temperature 0."""
DEFAULT_MAX_TOKENS = 1024
DEFAULT_TIMEOUT_S = 120.0

log = logging.getLogger(__name__)
T = TypeVar("T")

_REACHED: set[tuple[str, str | None]] = set()
"""The hosts (provider, ``api_base`` host) this process has had a reply from. A name with no
address is a configuration error (``UnresolvedHost``) only for a host not among them: one that
answered before is not mistyped, its resolver is offline (``LostHost``, retried)."""

class ProviderGate(Protocol):
    """What a client's every call to its provider goes through (``llm_aai.llm.provider_limits``).

    One gate per endpoint is shared by every client of the run that calls it, in this process
    (``LocalGate``) or across a Ray cluster (``llm_aai.runner.ray_services.ClusterGate``).
    """

    def turn(self, lease_s: float) -> AbstractContextManager[None]:
        """Hold a slot and wait for the call's turn (its rate, any pause); the call runs inside.

        A slot not given back within ``lease_s`` may be taken back.
        """
        ...

    def pause(self, seconds: float) -> None:
        """Hold every call to the endpoint back for ``seconds``."""
        ...


class ChatClient(Protocol):
    """What an agent needs from a model: send a conversation, get one reply."""

    model: str

    def complete(self, messages: Sequence[Message]) -> LLMResponse:
        """Send the whole conversation and return the reply with its accounting."""
        ...


class LiteLLMClient:
    """Calls any litellm-supported model with one bounded, transient-only retry policy.

    Args:
        model: an alias (``claude``) or a litellm model string (``openai/gpt-4o``).
        api_base: URL of an OpenAI-compatible server (local models, the fake server).
        api_key: explicit key; otherwise litellm reads the provider's environment variable.
        temperature: sampling temperature (the paper used 0).
        max_tokens: cap on the reply length.
        timeout_s: the longest one attempt may take, from sending to the whole reply.
        max_retries: retries after the first attempt for transient errors.
        max_concurrent: simultaneous calls allowed per provider endpoint.
        requests_per_minute: calls per provider endpoint in any minute (None: no
            limit). With ``max_concurrent`` and the pauses a 429's ``Retry-After`` asks, held
            by the endpoint's gate (``self.gate``), which every client of the process calling
            it shares; a run on Ray replaces it with the cluster's.
        retry_policy: full control of the backoff; overrides ``max_retries``.
        extra_params: passed through to ``litellm.completion`` (e.g. ``top_p``).
        price_per_mtok: dollars per million input and output tokens, used instead of
            litellm's price list (which knows no local model); None: litellm's.

    """

    def __init__(
        self,
        model: str,
        api_base: str | None = None,
        *,
        api_key: str | None = None,
        temperature: float = DEFAULT_TEMPERATURE,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        max_retries: int = DEFAULT_MAX_RETRIES,
        max_concurrent: int = 8,
        requests_per_minute: int | None = None,
        retry_policy: RetryPolicy | None = None,
        extra_params: dict[str, Any] | None = None,
        seed: int | None = None,
        price_per_mtok: tuple[float, float] | None = None,
    ) -> None:
        self.spec: ModelSpec = resolve_model(model)
        self.model = self.spec.litellm_model
        self.api_base = api_base
        self._api_key = Secret(api_key) if api_key else None
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.timeout_s = timeout_s
        self.retry_policy = retry_policy or RetryPolicy(max_attempts=max_retries + 1)
        self.max_concurrent = max_concurrent
        self.extra_params = dict(extra_params or {})
        self.requests_per_minute = requests_per_minute
        self.gate: ProviderGate = local_gate(self.spec.provider, api_base, max_concurrent,
                                             requests_per_minute)
        self._rng = random.Random(seed)
        self.prices = Prices(*price_per_mtok) if price_per_mtok is not None else None

    def __repr__(self) -> str:
        return (f"LiteLLMClient(model={self.model!r}, api_base={self.api_base!r}, "
                f"temperature={self.temperature}, max_tokens={self.max_tokens}, "
                f"timeout_s={self.timeout_s}, max_attempts={self.retry_policy.max_attempts}, "
                f"api_key={'<set>' if self._api_key else '<from env>'})")

    def describe(self) -> dict[str, Any]:
        """Return the settings worth writing to a run manifest (never the key)."""
        return {"model": self.model, "alias": self.spec.alias, "api_base": self.api_base,
                "temperature": self.temperature, "max_tokens": self.max_tokens,
                "timeout_s": self.timeout_s, "max_attempts": self.retry_policy.max_attempts,
                "max_concurrent": self.max_concurrent,
                **({"requests_per_minute": self.requests_per_minute}
                   if self.requests_per_minute is not None else {}),
                **self.extra_params}

    def _secrets(self) -> list[str | None]:
        secrets = [self._api_key.reveal() if self._api_key else None]
        secrets += [os.environ.get(env) for env in self.spec.key_envs]
        return secrets

    def _scrub(self, text: str) -> str:
        return redact(text, *self._secrets())

    def _request(self, messages: Sequence[Message]) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": self.model,
            "messages": list(messages),
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "timeout": self.timeout_s,
            "num_retries": 0,  # litellm's own retry loop: off, ours decides
            "max_retries": 0,  # the provider SDK's retry loop: off too
            **self.extra_params,
        }
        if self.api_base:
            request["api_base"] = self.api_base
        if self._api_key:
            request["api_key"] = self._api_key.reveal()
        elif self.api_base and not any(os.environ.get(e) for e in self.spec.key_envs):
            # Self-hosted OpenAI-compatible servers ignore the key, but the OpenAI SDK
            # refuses to send a request without one.
            request["api_key"] = "no-key-needed"
        return request

    def _attempt(self, request: dict[str, Any]) -> tuple[Any, float]:
        litellm = import_litellm()  # before the turn: a call's turn is when it is sent
        try:
            with self.gate.turn(self.timeout_s + LEASE_MARGIN_S):
                return self._send(litellm, request)
        except Exception as exc:
            asked = retry_after_seconds(exc)
            if asked is not None:  # the endpoint's answer, not this call's: every call waits
                self.gate.pause(min(asked, self.retry_policy.max_wait_s))
            raise

    def _send(self, litellm: Any, request: dict[str, Any]) -> tuple[Any, float]:
        started = time.perf_counter()
        try:
            response = call_within(lambda: litellm.completion(**request), self.timeout_s,
                                   self._timeout_message())
        except Exception as exc:
            if is_timeout(exc) and not isinstance(exc, CallTimeout):  # litellm's own
                raise CallTimeout(self._timeout_message(), sent=not connect_failed(exc)) from None
            unreadable = unreadable_reply(exc)
            if unreadable is not None:  # a reply came, unreadable: retried, and charged
                raise MalformedReply(f"{self.model}: the reply cannot be read: "
                                     f"{unreadable}") from None
            raise
        if not getattr(response, "choices", None):  # {"choices": []} parses, holds nothing
            raise MalformedReply(f"{self.model}: the reply holds no choice")
        return response, time.perf_counter() - started

    def _timeout_message(self) -> str:
        """What a call that timed out says: what a slow server needs to answer in time."""
        rate = self.max_tokens / self.timeout_s
        return (f"{self.model}: no whole reply within {self.timeout_s:g} s. A slow server "
                f"needs a longer --timeout or a smaller --max-tokens: a reply of "
                f"{self.max_tokens} tokens in {self.timeout_s:g} s takes {rate:.1f} tokens/s")

    def complete(self, messages: Sequence[Message]) -> LLMResponse:
        """Send ``messages`` and return the reply.

        The tries sent that got no usable reply are counted, so that a budget can charge
        them: ``unanswered`` of the response, or of whatever exception ends the call (every
        retry failed, a refusal or an overflow after a reply without a choice, a stop while
        waiting to try again). A try that follows an unanswered one is first held for
        (``llm_aai.llm.resend``): a budget reserves for it there, or refuses it.

        Raises:
            LLMUnavailable: transient errors outlasted the retry policy.
            LLMRequestError: a non-transient error (auth, bad request); not retried.

        """
        tries = _Tries()
        try:
            return self._complete(self._request(messages), tries)
        except BaseException as error:
            error.unanswered = tries.unanswered  # type: ignore[attr-defined]
            raise

    def _complete(self, request: dict[str, Any], tries: _Tries) -> LLMResponse:
        failure: LLMRequestError | ContextOverflow | None = None

        def attempt() -> tuple[Any, float]:
            if tries.unanswered > tries.held:  # this try may be billed again: held for first
                hold_for_resend()
                tries.held = tries.unanswered
            try:
                result = self._attempt(request)
            except Exception as exc:
                tries.unanswered += _sent_unanswered(exc)
                lost = self._lost_host(exc)
                if lost is None:
                    raise
            else:
                _REACHED.add(self._host_key())
                return result
            raise lost  # outside the handler: a cause with no address would make it final

        try:
            (response, latency), retries = call_with_retries(
                attempt, self.retry_policy, describe=f"{self.model} call", rng=self._rng,
                scrub=self._scrub, sleep=wait_unless_stopped)
        except Exception as exc:
            unresolved = unresolved_host(exc)
            if unresolved is not None:
                failure = self._unresolved(*unresolved)
            elif (is_transient(exc)
                  or not type(exc).__module__.startswith(("litellm", "openai"))):
                raise
            elif _overflows_context(exc):
                failure = ContextOverflow(self._scrub(f"{self.model}: {describe_error(exc)}"))
            else:
                failure = LLMRequestError(
                    self._scrub(f"{self.model}: {describe_error(exc)}"),
                    status_code=getattr(exc, "status_code", None))
        if failure is not None:
            # Raised outside the handler so the provider's exception (whose message may
            # echo the key) is not chained into tracebacks.
            raise failure
        return self._to_response(response, latency, retries, tries.unanswered)

    def _host_key(self) -> tuple[str, str | None]:
        return self.spec.provider, urlsplit(self.api_base).hostname if self.api_base else None

    def _lost_host(self, exc: BaseException) -> LostHost | None:
        """``exc`` as a transient error if its host has no address now but answered before."""
        unresolved = unresolved_host(exc)
        if unresolved is None or self._host_key() not in _REACHED:
            return None
        host, said = unresolved
        host = (urlsplit(self.api_base).hostname if self.api_base else None) or host
        return LostHost(self._scrub(f"{self.model}: the host {host or '?'} has no address now "
                                    f"({said}), though it answered before: is the network "
                                    f"down?"))

    def _unresolved(self, host: str | None, said: str) -> UnresolvedHost:
        """The error of a host name with no address: which name, and where it was given."""
        host = (urlsplit(self.api_base).hostname if self.api_base else None) or host
        where = ("check the host name of --api-base" if self.api_base
                 else "check the network (the provider's name does not resolve here)")
        return UnresolvedHost(self._scrub(f"{self.model}: the host {host or '?'} has no "
                                          f"address ({said}): {where}"), host=host)

    def _to_response(self, response: Any, latency: float, retries: int,
                     unanswered: int = 0) -> LLMResponse:
        choice = response.choices[0]
        tokens = read_usage(getattr(response, "usage", None))
        cost, known = self._cost(response, tokens) if tokens.known else (0.0, False)
        text, notes = sanitize_reply(choice.message.content or "")
        for note in notes:
            log.warning("%s: %s", self.model, note)
        if not tokens.known:
            warn_once(self.model, self.api_base, tokens.problem)
            notes = (*notes, f"usage: {tokens.problem}; counted as unknown usage")
        return LLMResponse(
            text=text,
            model=getattr(response, "model", None) or self.model,
            input_tokens=tokens.input,
            output_tokens=tokens.output,
            cost_usd=cost,
            latency_s=latency,
            retries=retries,
            raw_finish_reason=getattr(choice, "finish_reason", None),
            cost_known=known,
            notes=notes,
            unanswered=unanswered,
            usage_known=tokens.known,
        )

    def _cost(self, response: Any, tokens: Tokens) -> tuple[float, bool]:
        if self.prices is not None:  # the user's prices win over litellm's list
            return self.prices.cost(tokens.input, tokens.output), True
        litellm = import_litellm()
        try:
            cost = float(litellm.completion_cost(completion_response=response,
                                                 model=self.model))
        except Exception as exc:  # litellm raises for models missing from its price map
            log.debug("no price for %s: %s", self.model, type(exc).__name__)
            return 0.0, False
        return (cost, True) if math.isfinite(cost) and cost >= 0 else (0.0, False)


class _Tries:
    """One call's tries sent without a usable reply, and how many of them were held for."""

    def __init__(self) -> None:
        self.unanswered = 0
        self.held = 0


def _sent_unanswered(exc: BaseException) -> bool:
    """Whether a try that raised ``exc`` was sent and may be billed, though no usage came back.

    A call that timed out once sent (the provider may finish the reply the client stopped
    waiting for) and a reply holding no choice. An error the provider answered (a 429, a 5xx,
    a 400) or a connection never made (refused, or timed out connecting: ``CallTimeout.sent``,
    a ``ConnectTimeout`` under the error) is not billed.
    """
    if isinstance(exc, MalformedReply):
        return True
    if isinstance(exc, CallTimeout):
        return exc.sent
    return is_timeout(exc) and not connect_failed(exc)


def _overflows_context(exc: BaseException) -> bool:
    """Whether litellm recognised ``exc`` as a context window overflow.

    Checked by name: this module imports litellm lazily.
    """
    return "ContextWindowExceededError" in {cls.__name__ for cls in type(exc).__mro__}


def call_within(call: Callable[[], T], seconds: float, message: str) -> T:
    """``call()``'s result, or ``CallTimeout`` once ``seconds`` have passed without one.

    The timeout litellm hands to its HTTP client bounds each read, not the call: a server
    sending its reply a byte every 0.2 s kept a call with ``--timeout 2`` for 58.6 s, and
    httpx has no timeout for a whole request. So the call runs in a thread of its own, and
    the caller stops waiting at the deadline. Threads cannot be stopped: an abandoned one
    ends when its read does (the per-read timeout still bounds each wait). It is a daemon
    thread, so it never keeps the interpreter from exiting. A call still connecting at the
    deadline (a host that drops packets) cannot be told from one whose reply is late: its
    ``CallTimeout`` counts as sent, which errs toward charging the budget too much.
    """
    done = threading.Event()
    outcome: list[Any] = []
    context = contextvars.copy_context()  # litellm's per-call state, as in the caller

    def run() -> None:
        try:
            outcome.append((True, context.run(call)))
        except BaseException as error:  # handed to the caller, raised there
            outcome.append((False, error))
        finally:
            done.set()

    threading.Thread(target=run, name="model-call", daemon=True).start()
    if not done.wait(seconds):
        raise CallTimeout(message)
    succeeded, value = outcome[0]
    if not succeeded:
        raise value
    return value
