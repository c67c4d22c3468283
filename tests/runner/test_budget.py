"""The hard budget, end to end over real HTTP (the fake server) with given prices."""

from __future__ import annotations

import csv
import dataclasses

import httpx
import pytest

from llm_aai.cli import analyze
from llm_aai.llm.call_stop import CallCancelled, calls_stop_when
from llm_aai.llm.client import LiteLLMClient, _sent_unanswered
from llm_aai.llm.errors import CallTimeout, ContextOverflow, LLMRequestError, LLMUnavailable
from llm_aai.llm.fake_server import Delay, FakeChatServer, HTTPError, Payload
from llm_aai.llm.pricing import Prices
from llm_aai.llm.retry import RetryPolicy
from llm_aai.llm.types import user_message
from llm_aai.logs import RunStore, read_turns
from llm_aai.protocol import PAPER_PROTOCOL
from llm_aai.runner import ModelOptions, ResumeOverrides, RunConfig, resume_run, start_run
from llm_aai.runner.app import RunError
from llm_aai.runner.budget import BudgetedClient, BudgetGate, BudgetReached
from llm_aai.settings import read_settings
from tests.helpers.runs import call_costs

PRICES = (100.0, 100.0)  # $ per million tokens: a call costs about 20 cents


def config(testbed_dir, url, *, concurrency, budget, prices=PRICES):
    return RunConfig(
        model="openai/fake", tasks="01-04-03,01-06-02", trials=4, arenas_dir=testbed_dir,
        resolution=64, concurrency=concurrency, budget_usd=budget,
        protocol=dataclasses.replace(PAPER_PROTOCOL, max_scripts=3),
        model_options=ModelOptions(api_base=url, max_tokens=64, price_per_mtok=prices))


@pytest.mark.slow
@pytest.mark.parametrize("concurrency", [1, 8])
def test_no_call_starts_that_could_pass_the_budget(testbed_dir, tmp_path, capsys, concurrency):
    budget = 3.0
    with FakeChatServer(default="Turn(6);", latency_s=0.05) as server:
        outcome = start_run(config(testbed_dir, server.url, concurrency=concurrency,
                                   budget=budget), out=tmp_path, run_id="r", show_progress=False)
        calls = len(server.requests)
    store = RunStore(outcome.run_dir)
    spent = store.spent()[1]
    costs = call_costs(outcome.run_dir)
    assert len(costs) == calls and costs
    overshoot = spent - budget
    with capsys.disabled():  # the figure the issue asks for
        print(f"\nconcurrency {concurrency}: spent ${spent:.4f} of ${budget:.2f} in {calls} "
              f"calls (largest ${max(costs):.4f}); overshoot ${overshoot:+.4f}")
    assert overshoot <= max(costs)  # the target: at most one call's cost
    assert overshoot <= 0  # the estimates err high, so in fact never
    stopped = [eid for eid, r in store.finished_results().items() if r.end_reason == "budget"]
    assert stopped  # marked as such
    assert "budget reached" in capsys.readouterr().err

    with FakeChatServer(default="Turn(6);") as server:  # more money: the rest is played
        resume_run(outcome.run_dir, ResumeOverrides(budget_usd=100.0, api_base=server.url),
                   show_progress=False)
    finished = store.finished_results()
    assert len(finished) == 8 and all(r.end_reason != "budget" for r in finished.values())
    for eid in stopped:  # the stopped attempt is kept beside the one that finished it
        assert (store.episodes_dir / f"{eid}.attempt-1" / "result.json").is_file()


def test_a_budget_for_a_model_without_a_price_is_refused(testbed_dir, tmp_path):
    with pytest.raises(RunError, match="litellm has no price for openai/fake.*--price-per-mtok"):
        start_run(config(testbed_dir, "http://127.0.0.1:9", concurrency=1, budget=1.0,
                         prices=None), out=tmp_path, run_id="r", show_progress=False)
    assert list(tmp_path.iterdir()) == []


def test_an_unknown_price_is_a_warning_and_given_prices_are_recorded(testbed_dir, tmp_path,
                                                                     capsys):
    with FakeChatServer(default="Go(3);") as server:
        unknown = config(testbed_dir, server.url, concurrency=1, budget=None, prices=None)
        start_run(dataclasses.replace(unknown, trials=1, tasks="01-04-03"), out=tmp_path,
                  run_id="unknown", show_progress=False)
        assert "warning: litellm has no price for openai/fake" in capsys.readouterr().err
        priced = config(testbed_dir, server.url, concurrency=1, budget=None)
        start_run(dataclasses.replace(priced, trials=1, tasks="01-04-03"), out=tmp_path,
                  run_id="priced", show_progress=False)
        assert "warning" not in capsys.readouterr().err
    assert read_settings(tmp_path / "unknown").cost_known is False
    # each episode and each call: the cost is unknown, not 0
    [row] = csv.DictReader((tmp_path / "unknown" / "summary.csv").open())
    assert row["cost_usd"] == "unknown" and int(row["input_tokens"]) > 0
    assert RunStore(tmp_path / "unknown").finished_results()["01-04-03_t1"].cost_usd is None
    calls = [t.usage for t in read_turns(tmp_path / "unknown" / "episodes" / "01-04-03_t1")
             if t.reply is not None]
    assert calls and all(usage.cost_usd is None for usage in calls)
    assert analyze.main([str(tmp_path / "unknown")]) == 0
    assert "unknown (no price)" in capsys.readouterr().out
    assert analyze.main([str(tmp_path / "priced")]) == 0
    assert "unknown" not in capsys.readouterr().out
    settings = read_settings(tmp_path / "priced")
    assert settings.config.model_options.price_per_mtok == PRICES
    result = RunStore(tmp_path / "priced").finished_results()["01-04-03_t1"]
    assert settings.price_per_mtok == PRICES
    assert result.cost_usd == pytest.approx(
        (result.input_tokens + result.output_tokens) * 100 / 1e6)


def budgeted(url: str, gate: BudgetGate, *, timeout_s: float = 30.0) -> BudgetedClient:
    """A client of the fake server whose calls go through ``gate``, retried without waits."""
    client = LiteLLMClient("openai/fake", api_base=url, api_key="x", max_tokens=64,
                           timeout_s=timeout_s, price_per_mtok=PRICES,
                           retry_policy=RetryPolicy(initial_wait_s=0.0, jitter=False))
    return BudgetedClient(client, gate, Prices(*PRICES), image_tokens=0)


def test_a_call_that_timed_out_is_charged_its_reservation():
    """The provider may finish and bill the reply the client stopped waiting for."""
    gate = BudgetGate(10.0)
    messages = [user_message("go on")]
    with FakeChatServer() as server:
        server.push(Delay(1.5))
        client = budgeted(server.url, gate, timeout_s=0.3)
        with pytest.raises(LLMUnavailable, match="timed out") as caught:
            client.complete(messages)
    estimate = client.estimate_usd(messages)
    assert caught.value.unanswered == 1
    assert caught.value.unanswered_cost_usd == pytest.approx(estimate)
    assert gate.spent_usd == pytest.approx(estimate) and gate.reserved_usd == 0


def test_a_reply_without_a_choice_is_charged_beside_the_reply():
    gate = BudgetGate(10.0)
    messages = [user_message("go on")]
    with FakeChatServer() as server:
        server.push(Payload({"choices": []}), "Go(1);")
        client = budgeted(server.url, gate)
        response = client.complete(messages)
    estimate = client.estimate_usd(messages)
    assert response.text == "Go(1);" and response.retries == 1 and response.unanswered == 1
    assert response.cost_usd > 0  # measured, and apart from the estimate
    assert response.unanswered_cost_usd == pytest.approx(estimate)
    assert gate.spent_usd == pytest.approx(response.cost_usd + estimate)


def test_only_a_timeout_after_connecting_is_charged():
    """httpx's connect timeout under litellm's Timeout is no request sent; a read timeout is."""
    request = httpx.Request("POST", "http://model.example/v1/chat/completions")

    def wrapped(cause: Exception) -> Exception:
        try:
            try:
                raise cause
            except Exception as inner:
                raise litellm_timeout() from inner
        except Exception as outer:
            return outer

    def litellm_timeout() -> Exception:
        return type("Timeout", (Exception,), {})("Request timed out.")

    assert not _sent_unanswered(wrapped(httpx.ConnectTimeout("timed out", request=request)))
    assert _sent_unanswered(wrapped(httpx.ReadTimeout("timed out", request=request)))
    assert not _sent_unanswered(CallTimeout("no reply", sent=False))
    assert _sent_unanswered(CallTimeout("no reply"))


NO_CHOICE = Payload({"choices": []})
OVERFLOW = ("This model's maximum context length is 4096 tokens. However, your messages "
            "resulted in 5000 tokens. Please reduce the length of the messages.")
ENDINGS = {
    "a refusal (400)": (HTTPError(400, "bad request"), LLMRequestError),
    "a context overflow": (HTTPError(400, OVERFLOW), ContextOverflow),
    "a stop while waiting to try again": (None, CallCancelled),
}


@pytest.mark.parametrize("then, raised", ENDINGS.values(), ids=ENDINGS.keys())
def test_tries_sent_unanswered_are_charged_whatever_ends_the_call(then, raised):
    gate = BudgetGate(10.0)
    messages = [user_message("go on")]
    with FakeChatServer() as server:
        server.push(NO_CHOICE, *([then] if then is not None else []))
        client = budgeted(server.url, gate)
        with calls_stop_when(lambda: then is None and len(server.requests) >= 1):
            with pytest.raises(raised) as caught:
                client.complete(messages)
    estimate = client.estimate_usd(messages)
    assert caught.value.unanswered == 1
    assert caught.value.unanswered_cost_usd == pytest.approx(estimate)
    assert gate.spent_usd == pytest.approx(estimate) and gate.reserved_usd == 0


def test_each_retry_after_an_unanswered_try_reserves_again():
    """One reservation per try that may be billed: the budget's promise holds for retries."""
    gate = BudgetGate(10.0)
    messages = [user_message("go on")]
    with FakeChatServer() as server:
        client = budgeted(server.url, gate)
        estimate = client.estimate_usd(messages)
        server.push(NO_CHOICE, NO_CHOICE, "Go(1);")
        response = client.complete(messages)
        assert response.unanswered == 2 and gate.reserved_usd == 0
        assert gate.spent_usd == pytest.approx(response.cost_usd + 2 * estimate)
        assert gate.spent_usd <= 3 * estimate  # within what was reserved

        gate.limit_usd = gate.spent_usd + 1.5 * estimate  # room for one try, not two
        server.push(NO_CHOICE, "Go(1);")
        spent = gate.spent_usd
        with pytest.raises(BudgetReached) as caught:
            client.complete(messages)
        assert len(server.requests) == 4  # the retry was not sent
    assert caught.value.unanswered_cost_usd == pytest.approx(estimate)
    assert gate.spent_usd == pytest.approx(spent + estimate)
    assert gate.spent_usd <= gate.limit_usd
    assert gate.reserved_usd == 0 and gate.refused


def test_errors_the_provider_answered_are_not_charged():
    gate = BudgetGate(10.0)
    with FakeChatServer() as server:
        server.push(HTTPError(503), HTTPError(503), "Go(1);")
        response = budgeted(server.url, gate).complete([user_message("go on")])
    assert response.unanswered == 0 and response.unanswered_cost_usd == 0
    assert gate.spent_usd == pytest.approx(response.cost_usd)


def test_a_timed_out_call_is_logged_as_an_estimate_and_counted_on_resume(testbed_dir, tmp_path):
    with FakeChatServer() as server:
        server.push("Go(1);", Delay(2.0))  # the second call outlasts the timeout
        base = config(testbed_dir, server.url, concurrency=1, budget=10.0)
        run = dataclasses.replace(
            base, tasks="01-04-03", trials=1, max_relaunches=0,
            model_options=dataclasses.replace(base.model_options, timeout_s=0.5))
        outcome = start_run(run, out=tmp_path, run_id="r", show_progress=False)
    store = RunStore(outcome.run_dir)
    result = store.finished_results()["01-04-03_t1"]
    assert result.end_reason == "infrastructure"
    [usage] = [t.usage for t in read_turns(outcome.run_dir / "episodes" / "01-04-03_t1")
               if t.reply is not None]
    assert result.cost_usd == pytest.approx(usage.cost_usd)  # the measured cost alone
    # the call that timed out is charged its reservation: its text at 3 characters a token
    # (the first turn's request and its reply, and more) and the reply at --max-tokens
    assert result.unanswered_cost_usd > (usage.input_tokens + 64) * 100 / 1e6
    # what a resumed run starts its budget from
    assert store.spent()[1] == pytest.approx(result.cost_usd + result.unanswered_cost_usd)
    [row] = csv.DictReader((outcome.run_dir / "summary.csv").open())
    assert float(row["unanswered_cost_usd"]) == result.unanswered_cost_usd
    assert float(row["cost_usd"]) == result.cost_usd
