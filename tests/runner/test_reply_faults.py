"""Replies a provider should never send, through a whole run: what the run records and sends.

Real subprocess, real litellm HTTP, the fake server on 127.0.0.1 (issue 51).
"""

from __future__ import annotations

import csv
import dataclasses
import json
import re

from llm_aai.cli import analyze
from llm_aai.llm.fake_server import BadBytes, BadUsage, FakeChatServer
from llm_aai.logs import RunStore, read_turns
from llm_aai.protocol import PAPER_PROTOCOL
from llm_aai.runner import ModelOptions, RunConfig, start_run
from tests.runner.test_provider_faults import base_args, run_cli

MB = 1_000_000


def text_of(message) -> str:
    content = message["content"]
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text", "") for part in content if part.get("type") == "text")


def test_a_reply_of_one_huge_word_is_quoted_in_part_in_the_next_request(testbed_dir, tmp_path):
    """The feedback quotes a bounded excerpt: the next request carries the word once only."""
    huge = "Q" * MB
    with FakeChatServer(["Go(1);", huge], default="Go(2);") as server:
        done = run_cli(base_args(testbed_dir, tmp_path, server.url, scripts=3))
        bodies = [request.body for request in server.requests]
    assert done.returncode == 0, done.stderr
    assert len(bodies) == 3
    after = bodies[2]["messages"]
    assert after[-2] == {"role": "assistant", "content": huge}  # the history keeps the reply
    feedback = text_of(after[-1])
    assert "unknown command 'QQQQ" in feedback and "..." in feedback
    assert feedback.count("Q") < 200
    grown = len(json.dumps(bodies[2])) - len(json.dumps(bodies[1]))
    assert MB < grown < MB + 10_000  # was twice the word: once replied, once quoted


def test_a_reply_that_is_not_utf8_is_retried_and_the_run_goes_on(testbed_dir, tmp_path):
    """One invalid byte in a 200 stopped the run as 'the model refused a request'."""
    with FakeChatServer([BadBytes()], default="Go(3);") as server:
        done = run_cli(base_args(testbed_dir, tmp_path, server.url))
        answered = len(server.requests)
    assert done.returncode == 0, done.stderr
    assert "refused a request" not in done.stderr
    assert "is not UTF-8" in done.stderr and "retrying" in done.stderr
    episode = tmp_path / "r" / "episodes" / "01-04-03_t1"
    result = json.loads((episode / "result.json").read_text())
    assert result["end_reason"] != "infrastructure" and result["scripts_used"] == 2
    assert result["attempts"] == 1 and answered == 3  # the bad reply, its retry, script 2
    assert read_turns(episode)[1].usage.retries == 1


def test_replies_that_stay_unreadable_end_their_episode_only(testbed_dir, tmp_path):
    args = base_args(testbed_dir, tmp_path, None)
    args[args.index("--tasks") + 1] = "01-04-03,01-06-02"
    with FakeChatServer([BadBytes(), BadBytes()], default="Go(3);") as server:
        args[args.index("--api-base") + 1] = server.url
        done = run_cli([*args, "--concurrency", 1, "--max-retries", 1, "--max-relaunches", 0,
                        "--relaunch-delay", 0])
    assert done.returncode == 1, done.stderr  # an episode lost to infrastructure
    assert "refused a request" not in done.stderr
    assert "1 of 2 episodes ended on infrastructure errors" in done.stderr
    results = RunStore(tmp_path / "r").finished_results()
    lost, played = results["01-04-03_t1"], results["01-06-02_t1"]
    assert lost.end_reason == "infrastructure" and "is not UTF-8" in lost.infra_error
    assert played.end_reason != "infrastructure" and played.scripts_used == 2


BAD_USAGE = [{"prompt_tokens": -5_000_000}, {"prompt_tokens": "abc"},
             {"completion_tokens": 10 ** 15}, {"prompt_tokens": float("nan")}]


def test_impossible_usage_never_lets_a_run_pass_its_budget(testbed_dir, tmp_path, capsys,
                                                           caplog):
    """Negative usage on some calls let --budget-usd 0.15 spend $0.25 and log -$599.87."""
    budget, prices = 0.15, (10.0, 10.0)
    calls = []

    def answer(body):
        calls.append(body)
        return BadUsage(BAD_USAGE[len(calls) // 2 % 4], "Go(3);") if len(calls) % 2 else "Go(3);"

    with FakeChatServer(responder=answer) as server:
        run = RunConfig(model="openai/fake", tasks="01-04-03,01-06-02", trials=3,
                        arenas_dir=testbed_dir, resolution=64, concurrency=1, budget_usd=budget,
                        protocol=dataclasses.replace(PAPER_PROTOCOL, max_scripts=3),
                        model_options=ModelOptions(api_base=server.url, price_per_mtok=prices))
        outcome = start_run(run, out=tmp_path, run_id="r", show_progress=False)
        honest = [server.completion_body("Go(3);", body)["usage"] for body in calls]
    spent_in_truth = sum(u["prompt_tokens"] + u["completion_tokens"] for u in honest) * 10 / 1e6
    assert spent_in_truth <= budget  # what the server would bill, had it counted honestly
    warned = [r for r in caplog.records if "reported impossible usage" in r.getMessage()]
    assert len(warned) == 1  # once per run, not per call
    results = RunStore(outcome.run_dir).finished_results().values()
    assert any(r.end_reason == "budget" for r in results)
    charged = [(r.cost_usd or 0.0) + (r.unanswered_cost_usd or 0.0) for r in results]
    assert sum(charged) <= budget
    assert all(r.cost_usd is None or r.cost_usd >= 0 for r in results)
    assert any(r.unanswered_cost_usd for r in results)  # the estimates charged instead
    rows = list(csv.DictReader((outcome.run_dir / "summary.csv").open()))
    for row in rows:
        for column in ("cost_usd", "unanswered_cost_usd"):
            assert not row[column].startswith("-") and row[column] != "nan", row
    assert analyze.main([str(outcome.run_dir)]) == 0
    shown = capsys.readouterr().out
    measured, estimated = re.search(r"(\S+) \+ ~(\S+) estimated for unanswered calls",
                                    shown).groups()  # the cost cell: both parts, apart
    assert 0 <= float(measured) and 0 < float(estimated)
    assert float(measured) + float(estimated) <= budget + 0.01  # shown to the cent
