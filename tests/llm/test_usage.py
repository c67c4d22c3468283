"""Usage a server should never report: read as unknown, warned of once, never a negative cost.

Through the real litellm path, against the fake server's ``BadUsage`` fault (issue 51).
"""

from __future__ import annotations

import logging
import math

import pytest

from llm_aai.llm.client import LiteLLMClient
from llm_aai.llm.errors import LLMUnavailable
from llm_aai.llm.fake_server import BadUsage, FakeChatServer
from llm_aai.llm.pricing import Prices
from llm_aai.llm.retry import RetryPolicy
from llm_aai.llm.types import user_message
from llm_aai.llm.usage import MAX_CALL_TOKENS, read_usage
from llm_aai.runner.budget import BudgetedClient, BudgetGate

PRICES = (10.0, 10.0)
HELLO = [user_message("Your remaining health is 99.9.")]
NO_WAIT = RetryPolicy(max_attempts=3, initial_wait_s=0.0, jitter=False)

# what litellm hands on as the reply's usage (it coerces some: "12" is 12, True is 1)
IMPOSSIBLE = {
    "negative prompt": {"prompt_tokens": -5_000_000},
    "negative completion": {"completion_tokens": -1},
    "huge": {"prompt_tokens": 10 ** 15},
    "huge in sum": {"prompt_tokens": MAX_CALL_TOKENS // 2 + 1,
                    "completion_tokens": MAX_CALL_TOKENS // 2 + 1},
    "no prompt counted": {"prompt_tokens": 0, "completion_tokens": 0},
    "missing": None,
}


def client(server: FakeChatServer, dialect: str = "openai", **kw) -> LiteLLMClient:
    model, url = (("openai/fake", server.url) if dialect == "openai"
                  else ("anthropic/claude-fake", server.root_url))
    return LiteLLMClient(model, api_base=url, api_key="x", max_tokens=64,
                         retry_policy=NO_WAIT, **kw)


@pytest.mark.parametrize("usage", [
    {"prompt_tokens": -1, "completion_tokens": 3},
    {"prompt_tokens": "12", "completion_tokens": 3},
    {"prompt_tokens": True, "completion_tokens": 3},
    {"prompt_tokens": float("nan"), "completion_tokens": 3},
    {"prompt_tokens": float("inf"), "completion_tokens": 3},
    {"prompt_tokens": 2.5, "completion_tokens": 3},
    {"prompt_tokens": [4], "completion_tokens": 3},
    {"prompt_tokens": 4},
    {"prompt_tokens": 4, "completion_tokens": MAX_CALL_TOKENS + 1},
    None,
])
def test_an_impossible_count_is_unknown_usage(usage):
    tokens = read_usage(usage)
    assert not tokens.known and tokens.problem
    assert (tokens.input, tokens.output) == (0, 0)


def test_believable_counts_are_read_as_they_are():
    assert read_usage({"prompt_tokens": 1200, "completion_tokens": 0}).known
    tokens = read_usage({"prompt_tokens": 1200.0, "completion_tokens": 7})
    assert tokens.known and (tokens.input, tokens.output) == (1200, 7)


ANTHROPIC_NAMES = {"prompt_tokens": "input_tokens", "completion_tokens": "output_tokens"}
CASES = [*(("openai", name, usage) for name, usage in IMPOSSIBLE.items()),
         # litellm's Anthropic parser refuses a reply without usage: retried, as unparseable
         *(("anthropic", name, {ANTHROPIC_NAMES[k]: v for k, v in usage.items()})
           for name, usage in IMPOSSIBLE.items() if usage is not None)]


@pytest.mark.parametrize(("dialect", "name", "usage"), CASES,
                         ids=[f"{d}-{n}" for d, n, _ in CASES])
def test_a_reply_with_impossible_usage_is_kept_its_cost_unknown(dialect, name, usage):
    with FakeChatServer([BadUsage(usage, "Go(2);")]) as server:
        response = client(server, dialect, price_per_mtok=PRICES).complete(HELLO)
    assert response.text == "Go(2);" and response.retries == 0
    assert not response.usage_known and not response.cost_known
    assert (response.input_tokens, response.output_tokens, response.cost_usd) == (0, 0, 0.0)
    assert any(note.startswith("usage: ") for note in response.notes)


def test_anthropic_usage_that_is_a_string_counts_as_none():
    """litellm's Anthropic parser reads ``"abc"`` as 0 prompt tokens: no count at all."""
    with FakeChatServer([BadUsage({"input_tokens": "abc"})]) as server:
        response = client(server, "anthropic", price_per_mtok=PRICES).complete(HELLO)
    assert not response.usage_known and response.input_tokens == 0


@pytest.mark.parametrize("bad", ["abc", float("nan"), 1.5, [3]])
def test_usage_litellm_cannot_parse_is_a_bad_reply_retried_and_charged(bad):
    """litellm refuses the whole reply ("Invalid response object"): a try that came back."""
    gate = BudgetGate(10.0)
    with FakeChatServer([BadUsage({"prompt_tokens": bad}), "Go(3);"]) as server:
        inner = client(server, price_per_mtok=PRICES)
        budgeted = BudgetedClient(inner, gate, Prices(*PRICES), image_tokens=0)
        response = budgeted.complete(HELLO)
    estimate = budgeted.estimate_usd(HELLO)
    assert response.text == "Go(3);" and response.retries == 1 and response.unanswered == 1
    assert response.unanswered_cost_usd == pytest.approx(estimate)
    assert response.cost_usd > 0
    assert gate.spent_usd == pytest.approx(response.cost_usd + estimate)


def test_usage_that_stays_unparseable_ends_the_call_as_an_outage():
    with FakeChatServer([BadUsage({"prompt_tokens": "abc"})] * 3) as server:
        with pytest.raises(LLMUnavailable, match="litellm could not parse it") as info:
            client(server).complete(HELLO)
    assert info.value.unanswered == 3


def test_a_budget_charges_the_reservation_for_impossible_usage_never_less():
    gate = BudgetGate(1.0)
    script = [BadUsage({"prompt_tokens": -5_000_000}), "Go(1);", BadUsage({"completion_tokens":
                                                                           -10 ** 9})]
    with FakeChatServer(script) as server:
        budgeted = BudgetedClient(client(server, price_per_mtok=PRICES), gate,
                                  Prices(*PRICES), image_tokens=0)
        replies = [budgeted.complete(HELLO) for _ in script]
    estimate = budgeted.estimate_usd(HELLO)
    bad, good, worse = replies
    for reply in (bad, worse):  # the estimate, as a call sent unanswered is charged
        assert reply.cost_usd == 0.0 and reply.unanswered_cost_usd == pytest.approx(estimate)
        assert reply.cost_known  # under a budget the estimate stands for the cost
    assert good.cost_usd > 0 and good.unanswered_cost_usd == 0
    assert gate.spent_usd == pytest.approx(2 * estimate + good.cost_usd)
    assert gate.reserved_usd == pytest.approx(0.0)
    assert all(r.cost_usd >= 0 and math.isfinite(r.cost_usd) for r in replies)


def test_a_negative_cost_from_any_client_is_charged_the_reservation():
    """The budget settles no cost below zero, whichever client measured it."""

    class Refunding:
        model, max_tokens = "refunding", 64

        def complete(self, messages):
            from llm_aai.llm.types import LLMResponse
            return LLMResponse("Go(1);", "refunding", 10, 5, -600.0, 0.1, 0, "stop")

    gate = BudgetGate(1.0)
    budgeted = BudgetedClient(Refunding(), gate, Prices(*PRICES), image_tokens=0)
    reply = budgeted.complete(HELLO)
    assert reply.cost_usd == 0.0 and gate.spent_usd == pytest.approx(budgeted.estimate_usd(HELLO))


def test_impossible_usage_is_warned_of_once_not_on_every_call(caplog):
    script = [BadUsage({"prompt_tokens": -1})] * 3 + [BadUsage({"completion_tokens": -2})]
    with FakeChatServer(script) as server:
        with caplog.at_level(logging.WARNING, logger="llm_aai.llm.usage"):
            made = client(server, price_per_mtok=PRICES)
            replies = [made.complete(HELLO) for _ in script]
            again = client(server, price_per_mtok=PRICES)  # another episode's client
            server.push(BadUsage({"prompt_tokens": -3}))
            replies.append(again.complete(HELLO))
    warnings = [r for r in caplog.records if r.name == "llm_aai.llm.usage"]
    assert len(warnings) == 1 and "prompt_tokens -1 is negative" in warnings[0].getMessage()
    assert all(not r.usage_known for r in replies)  # each turn still noted
    assert all(any("usage:" in n for n in r.notes) for r in replies)
