from __future__ import annotations

import io

import numpy as np
import pytest

from llm_aai.agents import (
    AGENTS,
    Agent,
    HumanAgent,
    RandomAgent,
    ReplayAgent,
    ReplayExhausted,
    TurnInput,
    make_agent,
    register_agent,
    resolve_agent,
)
from llm_aai.llm import MissingAPIKey
from llm_aai.script import parse_script

TURN = TurnInput([np.zeros((8, 8, 3), dtype=np.uint8)], "Your remaining health is 50.0.")


def test_random_agent_is_seeded_and_parses():
    def run(seed):
        agent = RandomAgent()
        agent.start_episode("", seed)
        return [agent.act(TURN).text for _ in range(20)]

    assert run(1) == run(1) and run(1) != run(2)
    for text in run(1):
        assert parse_script(text, mode="strict").n_steps > 0


def test_replay_reissues_in_order_then_stops():
    agent = ReplayAgent(["Go(1);", "not a script", "Turn(6);"])
    agent.start_episode("", 0)
    assert [agent.act(TURN).text for _ in range(3)] == ["Go(1);", "not a script", "Turn(6);"]
    with pytest.raises(ReplayExhausted, match="diverged"):
        agent.act(TURN)
    agent.start_episode("", 0)
    assert agent.act(TURN).text == "Go(1);"


def test_human_reads_scripts_and_shows_frames(tmp_path):
    out = io.StringIO()
    agent = HumanAgent(io.StringIO("Go(3);\n  Turn(90);  \n"), out, frame_dir=tmp_path)
    agent.start_episode("BACKGROUND", 0)
    assert agent.act(TURN).text == "Go(3);"
    assert agent.act(TURN).text == "Turn(90);"
    shown = out.getvalue()
    assert "BACKGROUND" in shown and "Your remaining health is 50.0." in shown
    saved = sorted(tmp_path.glob("*.png"))
    assert len(saved) == 2 and str(saved[0]) in shown
    with pytest.raises(EOFError):
        agent.act(TURN)


def test_registry_builds_every_builtin():
    for name, options in {"heuristic": {}, "random": {"max_go": 5}, "human": {},
                          "replay": {"scripts": ["Go(1);"]}}.items():
        agent = make_agent(name, **options)
        assert isinstance(agent, Agent) and agent.name == name
    assert set(AGENTS) >= {"heuristic", "random", "human", "replay"}
    with pytest.raises(ValueError, match="scripts"):
        make_agent("replay")
    entry = AGENTS["random"]
    with pytest.raises(ValueError, match="taken"):
        register_agent("heuristic", entry)
    with pytest.raises(ValueError, match="taken"):
        register_agent("claude", entry)


def test_resolve_agent_filters_cli_options_and_creates_fresh_agents(monkeypatch):
    cli = {"api_base": None, "temperature": 0.0, "max_tokens": 1024, "timeout_s": 60.0,
           "max_retries": 3, "keep_last_images": None, "prompt_caching": False,
           "replay_from": None}
    spec = resolve_agent("heuristic", **cli)
    assert spec.kind == "builtin" and dict(spec.options) == {}
    first, second = spec.create(), spec.create()
    assert first is not second and first.name == "heuristic"
    assert spec.describe() == {"name": "heuristic", "kind": "builtin", "options": {}}
    with pytest.raises(TypeError, match="colour"):
        resolve_agent("heuristic", colour="blue")

    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-secret-value-123456")
    model = resolve_agent("gpt", api_key="sk-explicit-secret-987654", **cli)
    assert model.kind == "model"
    described = str(model.describe())
    assert "sk-explicit" not in described and "sk-env" not in described
    assert model.describe()["litellm_model"] == "openai/gpt-4o"
    assert model.describe()["api_key_env"] == "OPENAI_API_KEY"
    assert "secret" not in repr(model) and "secret" not in repr(model.create())


def test_model_names_check_the_key_first(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(MissingAPIKey, match="ANTHROPIC_API_KEY"):
        make_agent("claude")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    agent = make_agent("claude", keep_last_images=4, max_tokens=50)
    assert agent.name == "anthropic/claude-sonnet-4-6"
    assert agent.client.max_tokens == 50 and agent.keep_last_images == 4
    assert "k'" not in repr(agent)
