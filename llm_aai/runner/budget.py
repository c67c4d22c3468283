"""A hard spending cap: no model call starts unless the budget can pay for it.

Each call reserves an upper estimate of its cost (its input tokens from the request's text
and images, its output at the reply limit) before it is sent; the reservation becomes the
call's real cost when the reply arrives. A call is refused when what the run has spent, plus
what the calls in flight have reserved, plus its own estimate would pass the budget: the run
then overshoots by at most what the estimates understate, whatever the concurrency.

A try that was sent and got no usable reply (it timed out, or its reply held no choice) has
no usage to read, yet a provider may bill it: it is charged its estimate, the reservation
kept rather than given back, and a retry after it reserves the estimate again first (or is
refused), so that the promise above holds for retried calls too. That charge is recorded
apart from the measured cost (``unanswered_cost_usd``), as the estimate it is, whatever
ends the call. A reply whose usage is impossible (negative, not a number, huge, missing:
``llm_aai.llm.usage``) is charged so too: its reservation, never what its counts would say,
so that no reply gives the budget back what the run spent.
"""

from __future__ import annotations

import dataclasses
import math
import threading
from collections.abc import Sequence
from typing import Any

from llm_aai.llm.pricing import Prices, estimate_input_tokens
from llm_aai.llm.resend import before_each_resend
from llm_aai.llm.types import LLMResponse, Message

__all__ = ["BUDGET", "BudgetGate", "BudgetReached", "BudgetedClient"]

BUDGET = "budget"
"""The end reason of an episode stopped because its next call could pass the budget; like an
infrastructure failure it says nothing about the model, and a resumed run plays it again."""


class BudgetReached(Exception):
    """A model call was not started: it could have taken the run past its budget."""


class BudgetGate:
    """The run's spending, shared by every episode's client (thread-safe).

    Args:
        limit_usd: the budget.
        spent_usd: what the run had spent before (earlier invocations, sealed attempts).

    """

    def __init__(self, limit_usd: float, spent_usd: float = 0.0):
        self.limit_usd = limit_usd
        self.spent_usd = spent_usd
        self.reserved_usd = 0.0
        self.refused = False
        """True once a call was refused: the run starts no more episodes."""
        self._lock = threading.Lock()

    def reserve(self, estimate_usd: float) -> None:
        """Hold ``estimate_usd`` for a call about to start.

        Raises:
            BudgetReached: the call could take the run past its budget.

        """
        with self._lock:
            committed = self.spent_usd + self.reserved_usd
            if committed + estimate_usd > self.limit_usd:
                self.refused = True
                raise BudgetReached(
                    f"budget reached: ${self.spent_usd:.4f} spent and ${self.reserved_usd:.4f} "
                    f"held by calls in flight; the next call (up to ${estimate_usd:.4f}) "
                    f"could pass ${self.limit_usd:.2f}")
            self.reserved_usd += estimate_usd

    def settle(self, estimate_usd: float, cost_usd: float) -> None:
        """Replace a reservation by what the call cost or was charged.

        0 for a call never sent or refused by the provider; a try sent without a usable
        reply is charged its estimate (``BudgetedClient``).
        """
        with self._lock:
            self.reserved_usd -= estimate_usd
            self.spent_usd += cost_usd


class BudgetedClient:
    """A model client whose every call first reserves its estimated cost with the gate.

    Args:
        inner: the client that makes the calls (``LiteLLMClient``).
        gate: the run's budget.
        prices: what a token costs for this model.
        image_tokens: an upper estimate of one image's input tokens.

    """

    def __init__(self, inner: Any, gate: BudgetGate, prices: Prices, image_tokens: int):
        self.inner = inner
        self.gate = gate
        self.prices = prices
        self.image_tokens = image_tokens

    @property
    def model(self) -> str:
        """The model the inner client calls."""
        return self.inner.model

    def __getattr__(self, name: str) -> Any:
        """The inner client's settings (temperature, ``api_base``, ``extra_params``...).

        The response cache wraps this client and keys each request by them: without them
        it could not tell one server, or one sampling setting, from another.
        """
        if name == "inner":  # not set yet (unpickling): no recursion through __getattr__
            raise AttributeError(name)
        return getattr(self.inner, name)

    def estimate_usd(self, messages: Sequence[Message]) -> float:
        """An upper estimate of one call's cost: every reply token at the reply limit."""
        return self.prices.cost(estimate_input_tokens(messages, self.image_tokens),
                                self.inner.max_tokens)

    def complete(self, messages: Sequence[Message]) -> LLMResponse:
        """Reserve, call, settle; a refused reservation sends nothing.

        The call's tries sent without a usable reply (``unanswered``) are each charged the
        estimate, beside what the reply cost, and a retry after one reserves the estimate
        again first; the response, or whatever exception ends the call, says how much in
        ``unanswered_cost_usd``. A reply whose usage cannot be believed is charged the
        estimate as well, there, its ``cost_usd`` 0.

        Raises:
            BudgetReached: the call, or its retry after an unanswered try, was not started.
            LLMUnavailable: the model did not answer (charged as said).

        """
        estimate = self.estimate_usd(messages)
        self.gate.reserve(estimate)
        held = 1

        def hold_another() -> None:
            nonlocal held
            self.gate.reserve(estimate)
            held += 1

        try:
            with before_each_resend(hold_another):
                response = self.inner.complete(messages)
        except BaseException as error:  # a refusal, a stop: what was sent is charged still
            charged = getattr(error, "unanswered", 0) * estimate
            if charged:
                error.unanswered_cost_usd = charged  # type: ignore[attr-defined]
            self.gate.settle(held * estimate, charged)
            raise
        if not _measured(response):  # no believable usage: the reservation stands for it
            charged = (response.unanswered + 1) * estimate
            self.gate.settle(held * estimate, charged)
            return dataclasses.replace(response, cost_usd=0.0, cost_known=True,
                                       unanswered_cost_usd=charged)
        charged = response.unanswered * estimate
        self.gate.settle(held * estimate, response.cost_usd + charged)
        return dataclasses.replace(response, unanswered_cost_usd=charged)


def _measured(response: LLMResponse) -> bool:
    """Whether the reply's cost was measured: believable usage, a cost that is a price.

    A cost that is negative or not a number (from any client) is no measure either: settled,
    it would give the budget back what was spent.
    """
    cost = response.cost_usd
    number = isinstance(cost, int | float) and math.isfinite(cost)
    return getattr(response, "usage_known", True) and number and cost >= 0
