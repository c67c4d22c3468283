"""``--extractor MODEL``: a model (the fake server, over real HTTP) splits Thinks into claims,
which the same rules then judge."""

from __future__ import annotations

import csv
import json
import shutil

import pytest

from llm_aai.cli.grounding import main
from llm_aai.grounding.llm_extract import LlmExtractionError, parse_claims
from llm_aai.llm.fake_server import FakeChatServer

SPLITS = [
    json.dumps([
        {"kind": "seen", "span": "I see a red ball straight ahead", "type": "ball",
         "colour": "red", "sees": True},
        {"kind": "bearing", "span": "a green ball 27 degrees to the right", "type": "ball",
         "colour": "green", "sees": True, "degrees": 27},
    ]),
    json.dumps([{"kind": "health_trend", "span": "My health has increased", "rising": True}]),
    "```json\n" + json.dumps([{"kind": "health_comparison", "span": "increased from 84.2 to "
                               "35.4", "rising": True, "values": [84.2, 35.4]}]) + "\n```",
]


@pytest.fixture
def run(claims_run, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-extractor")
    copy = tmp_path / "claims"
    shutil.copytree(claims_run, copy)
    return copy


def test_the_models_claims_are_judged_by_the_same_rules(run, capsys):
    with FakeChatServer(SPLITS) as server:
        assert main([str(run), "--extractor", "openai/fake", "--api-base", server.url]) == 0
        asked = [r.body["messages"][-1]["content"] for r in server.requests]
    with (run / "grounding.csv").open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["turn"], r["kind"], r["claim"], r["verdict"]) for r in rows] == [
        ("1", "seen", "I see a red ball straight ahead", "false"),
        ("1", "bearing", "a green ball 27 degrees to the right", "true"),
        ("2", "health_trend", "My health has increased", "false"),
        ("3", "health_comparison", "increased from 84.2 to 35.4", "false"),
    ]
    texts = [part if isinstance(part, str) else part[0]["text"] for part in asked]
    assert texts[0].startswith("I see a green ball 27 degrees")
    assert "4 claims in 1 episodes" in capsys.readouterr().out


def test_a_reply_that_is_not_a_claim_list_is_a_one_line_error(run, capsys):
    with FakeChatServer(["I think the claims are: the ball is green."]) as server:
        assert main([str(run), "--extractor", "openai/fake", "--api-base", server.url]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: the extractor's reply for Think 'I see a green ball 27")
    assert "is not JSON" in err and err.count("\n") == 1


def test_a_claim_with_a_field_out_of_range_is_refused():
    with pytest.raises(LlmExtractionError, match="object type must be one of"):
        parse_claims('[{"kind": "seen", "span": "x", "type": "dragon"}]', "x")
    with pytest.raises(LlmExtractionError, match="a bearing claim needs a side or degrees"):
        parse_claims('[{"kind": "bearing", "span": "x", "type": "ball"}]', "x")
