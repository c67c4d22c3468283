"""The token counts a reply reports, read as a budget must: an impossible count is no count.

A server's usage is the only measure of what a call cost, and a budget subtracts nothing: a
server that reported -5,000,000 prompt tokens on some calls gave a run back dollars it had
spent (``--budget-usd 0.15`` made 12 calls costing $0.25 and logged -$599.87). A count that
is negative, not a whole number (a string, NaN, a bool), larger than any context holds, or
missing (no prompt tokens: every request has some) is read as unknown usage: the client
warns once per run, notes the turn, and a budget charges the call its reservation
(``llm_aai.runner.budget``), as it charges a call sent without a usable reply.
"""

from __future__ import annotations

import logging
import math
import threading
from dataclasses import dataclass
from typing import Any

__all__ = ["MAX_CALL_TOKENS", "Tokens", "read_usage", "warn_once"]

log = logging.getLogger(__name__)

MAX_CALL_TOKENS = 100_000_000
"""More tokens than this in one call is no real count: the largest context windows hold about
ten million."""

_FIELDS = ("prompt_tokens", "completion_tokens")


@dataclass(frozen=True)
class Tokens:
    """A reply's usage: its counts, or why it has none that can be believed.

    Attributes:
        input: prompt tokens (0 when unknown).
        output: completion tokens (0 when unknown).
        problem: what was impossible in the reported usage; None when it is believable.

    """

    input: int = 0
    output: int = 0
    problem: str | None = None

    @property
    def known(self) -> bool:
        """Whether the counts were read from believable usage."""
        return self.problem is None


def read_usage(usage: Any) -> Tokens:
    """The counts of litellm's ``usage`` object (or a mapping), or why they cannot be read."""
    if usage is None:
        return Tokens(problem="the reply reports no usage")
    counts = []
    for name in _FIELDS:
        value = usage.get(name) if isinstance(usage, dict) else getattr(usage, name, None)
        count, problem = _count(value)
        if problem is not None:
            return Tokens(problem=f"{name} {_shown(value)} is {problem}")
        counts.append(count)
    prompt, completion = counts
    if prompt == 0:  # every request sends a prompt: a server that counts none counted nothing
        return Tokens(problem="prompt_tokens 0 is no count (every request has a prompt)")
    if prompt + completion > MAX_CALL_TOKENS:
        return Tokens(problem=f"{prompt + completion:,} tokens in one call is more than any "
                              f"context holds")
    return Tokens(prompt, completion)


def _count(value: Any) -> tuple[int, str | None]:
    """``value`` as a token count, or what is wrong with it."""
    if value is None:
        return 0, "missing"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0, f"a {type(value).__name__}, not a number"
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        return 0, "not a whole number"
    if value < 0:
        return 0, "negative"
    if value > MAX_CALL_TOKENS:
        return 0, "more than any context holds"
    return int(value), None


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


_WARNED: set[tuple[str, str | None]] = set()
_WARNED_LOCK = threading.Lock()


def warn_once(model: str, api_base: str | None, problem: str) -> None:
    """Warn of impossible usage once for each endpoint (a run's process calls one, or a few).

    Every such turn is noted in its log; a warning per call would bury the run's output.
    """
    with _WARNED_LOCK:
        if (model, api_base) in _WARNED:
            return
        _WARNED.add((model, api_base))
    log.warning("%s: the server reported impossible usage (%s): such a reply counts as unknown "
                "usage, its tokens as 0, and a budget charges it the estimate it reserved. Said "
                "once per run: each such turn is noted in its log", model, problem)
