"""The few failure types the runner must tell apart.

The runner records :class:`LLMUnavailable` as an infrastructure failure (the trial is
relaunched), treats :class:`LLMRequestError` as a configuration problem (wrong key,
unknown model, malformed request: retrying will not help), and shows
:class:`MissingAPIKey` before any episode starts.
"""

from __future__ import annotations

__all__ = ["CallTimeout", "ContextOverflow", "LLMError", "LLMRequestError", "LLMUnavailable",
           "LostHost", "MalformedReply", "MissingAPIKey", "UnresolvedHost"]


class LLMError(Exception):
    """Base class of every model-call failure raised by ``llm_aai.llm``.

    Attributes:
        unanswered: the call's tries sent that got no usable reply before it failed (set on
            whatever exception ``LiteLLMClient.complete`` raises): a provider may bill them.
        unanswered_cost_usd: what a budget charged for them (``llm_aai.runner.budget``).

    """

    unanswered: int = 0
    unanswered_cost_usd: float = 0.0


class MissingAPIKey(LLMError):
    """The provider needs a key and none is set; names the environment variable."""

    def __init__(self, model: str, env_vars: tuple[str, ...]) -> None:
        self.model = model
        self.env_vars = env_vars
        names = " or ".join(env_vars)
        super().__init__(
            f"model {model!r} needs an API key: set {names} in the environment "
            f"(or pass --api-base for a local OpenAI-compatible server)"
        )


class LLMUnavailable(LLMError):
    """Transient failures persisted through every retry (rate limits, 5xx, timeouts).

    Attributes:
        attempts: the tries made.
        unanswered: of them, the tries sent that got no usable reply (timed out, or a reply
            with no choice): a provider may bill them, though no usage says what.
        unanswered_cost_usd: what a budget charged for them (``llm_aai.runner.budget``): an
            estimate, not a cost a provider reported; 0 without a budget.

    """

    def __init__(self, message: str, *, attempts: int, unanswered: int = 0,
                 unanswered_cost_usd: float = 0.0) -> None:
        self.attempts = attempts
        self.unanswered = unanswered
        self.unanswered_cost_usd = unanswered_cost_usd
        super().__init__(message)


class LLMRequestError(LLMError):
    """A non-transient failure (auth, bad request, unknown model); not retried."""

    def __init__(self, message: str, *, status_code: int | None = None) -> None:
        self.status_code = status_code
        super().__init__(message)


class UnresolvedHost(LLMRequestError):
    """The model's host name has no address (a mistyped ``--api-base`` host); not retried.

    Only until the process has had a reply from the host: after one it is ``LostHost``.

    Attributes:
        host: the name looked up (None when the error did not say).

    """

    def __init__(self, message: str, *, host: str | None = None) -> None:
        self.host = host
        super().__init__(message)


class LostHost(LLMError):
    """A host this process has had replies from has no address now; retried.

    Its name resolved before, so it is not mistyped: an offline resolver says the same as a
    name with no address (macOS's "nodename nor servname provided" on a Wi-Fi drop, "Name or
    service not known" on a total network loss), and the network may come back.
    """


class MalformedReply(LLMError):
    """A reply without what every reply holds (a choice), or one that cannot be read.

    Not UTF-8, or refused by litellm's parser ("Invalid response object": a usage count that
    is a string, say). Retried, so that at worst the episode is lost to infrastructure, never
    the run; a budget charges each such try, as the server answered it.
    """


class CallTimeout(LLMError):
    """No whole reply within the call's timeout (a server trickling its body, for instance).

    Transient, like any timeout.

    Attributes:
        sent: whether the request may have reached the server (a provider may bill it);
            False when the HTTP client reported its connection never made (its connect
            timeout under litellm's).

    """

    def __init__(self, message: str, *, sent: bool = True) -> None:
        self.sent = sent
        super().__init__(message)


class ContextOverflow(LLMError):
    """The conversation no longer fits the model's context window.

    litellm raises ``ContextWindowExceededError`` for it. Neither the key nor the server is
    at fault, and later episodes start short again: the runner ends this episode with its
    own end reason and lets the others go on. Not retried: the same request overflows the
    same window.
    """
