from __future__ import annotations

import numpy as np
import pytest

from llm_aai.agents import LLMAgent, TurnInput, make_agent
from llm_aai.llm import LiteLLMClient, LLMUnavailable, RetryPolicy
from llm_aai.llm.fake_server import FakeChatServer, ServerError
from llm_aai.prompts import load_prompt

FAST = RetryPolicy(max_attempts=2, initial_wait_s=0.01, jitter=False)


def frame(value: int) -> np.ndarray:
    return np.full((24, 24, 3), value, dtype=np.uint8)


def turn(health: float, n_images: int = 1) -> TurnInput:
    return TurnInput([frame(10 * i + int(health)) for i in range(n_images)],
                     f"Your remaining health is {health:.1f}.", preamble="Observation captured.")


def test_full_history_is_sent_every_turn():
    prompt = load_prompt("react")
    with FakeChatServer(["Go(5);", "Turn(90);", "Go(-3);"]) as server:
        agent = make_agent("openai/fake", api_base=server.url, retry_policy=FAST)
        agent.start_episode(prompt.text, seed=0)
        replies = [agent.act(turn(99.9, 3)), agent.act(turn(96.9)), agent.act(turn(96.7))]
    assert [r.text for r in replies] == ["Go(5);", "Turn(90);", "Go(-3);"]
    assert all(r.input_tokens > 0 and r.retries == 0 for r in replies)
    bodies = [request.body["messages"] for request in server.requests]
    assert [len(b) for b in bodies] == [2, 4, 6]
    last = bodies[-1]
    assert last[0] == {"role": "system", "content": prompt.text}
    assert [m["role"] for m in last] == ["system", "user", "assistant"] * 1 + \
        ["user", "assistant", "user"]
    assert [m["content"] for m in last if m["role"] == "assistant"] == ["Go(5);", "Turn(90);"]
    first_user = last[1]["content"]
    assert [p["type"] for p in first_user] == ["text"] + ["image_url"] * 3 + ["text"]
    assert first_user[0]["text"] == "Observation captured."
    assert first_user[-1]["text"] == "Your remaining health is 99.9."
    images = sum(p["type"] == "image_url" for m in last if isinstance(m["content"], list)
                 for p in m["content"])
    assert images == 5


def test_keep_last_images_replaces_older_ones():
    with FakeChatServer(default="Go(1);") as server:
        agent = make_agent("openai/fake", api_base=server.url, retry_policy=FAST,
                           keep_last_images=2, image_placeholder="[old picture]")
        agent.start_episode("sys", seed=0)
        agent.act(turn(99.9, 3))
        agent.act(turn(98.0))
    sent = server.requests[-1].body["messages"]
    kinds = [p.get("type") if p["type"] == "image_url" else p["text"]
             for m in sent if isinstance(m["content"], list) for p in m["content"]]
    assert kinds.count("image_url") == 2
    assert kinds.count("[old picture]") == 2
    # The agent's own history keeps every image for the logs.
    kept = sum(p["type"] == "image_url" for m in agent.messages
               if isinstance(m["content"], list) for p in m["content"])
    assert kept == 4


def test_fold_system_prompt_sends_it_at_the_head_of_the_first_user_message():
    """For a chat template without a system role (#35): every request opens with a user
    message holding the prompt, then that message's own parts; the history keeps its own."""
    with FakeChatServer(default="Go(1);") as server:
        agent = make_agent("openai/fake", api_base=server.url, retry_policy=FAST,
                           fold_system_prompt=True)
        agent.start_episode("You play a game.", seed=0)
        agent.act(turn(99.9))
        agent.act(turn(98.0))
    for request in server.requests:
        sent = request.body["messages"]
        assert sent[0]["role"] == "user" and "system" not in [m["role"] for m in sent]
        parts = sent[0]["content"]
        assert parts[0] == {"type": "text", "text": "You play a game."}
        assert parts[1]["text"] == "Observation captured." and parts[2]["type"] == "image_url"
    assert [m["role"] for m in server.requests[-1].body["messages"]] == [
        "user", "assistant", "user"]
    assert agent.messages[0] == {"role": "system", "content": "You play a game."}


def test_failed_call_leaves_history_consistent():
    with FakeChatServer([ServerError(500)] * 2 + ["Go(2);"]) as server:
        agent = make_agent("openai/fake", api_base=server.url, retry_policy=FAST)
        agent.start_episode("sys", seed=0)
        with pytest.raises(LLMUnavailable):
            agent.act(turn(90.0))
        assert [m["role"] for m in agent.messages] == ["system"]
        assert agent.act(turn(90.0)).text == "Go(2);"
    assert [m["role"] for m in agent.messages] == ["system", "user", "assistant"]


def test_anthropic_cache_breakpoints_only_when_enabled():
    client = LiteLLMClient("anthropic/claude-sonnet-4-6", api_key="k")
    agent = LLMAgent(client, prompt_caching=True)
    agent.start_episode("background", seed=0)
    agent.messages.append({"role": "user", "content": "first"})
    agent.messages.append({"role": "assistant", "content": "Go(1);"})
    agent.messages.append({"role": "user", "content": [{"type": "text", "text": "second"}]})
    sent = agent.outgoing_messages()
    assert sent[0]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert sent[-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert sent[1]["content"] == "first"  # only the two breakpoints
    assert "cache_control" not in agent.messages[-1]["content"][-1]  # history untouched
    plain = LLMAgent(LiteLLMClient("openai/gpt-4o", api_key="k"), prompt_caching=True)
    plain.start_episode("background", seed=0)
    assert plain.outgoing_messages() == plain.messages


def test_act_before_start_is_an_error():
    agent = LLMAgent(LiteLLMClient("openai/gpt-4o", api_key="k"))
    with pytest.raises(RuntimeError, match="start_episode"):
        agent.act(turn(1.0))


def test_default_placeholder_matches_the_prompt_file():
    from llm_aai.agents.llm import DEFAULT_IMAGE_PLACEHOLDER
    from llm_aai.prompts import load_turn_messages

    assert DEFAULT_IMAGE_PLACEHOLDER == load_turn_messages("react").image_placeholder
