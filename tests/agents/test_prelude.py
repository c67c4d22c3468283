"""The worked example reaches the model before the episode's first observation (experiment 2)."""

from __future__ import annotations

import base64
import io

import numpy as np
import pytest
from PIL import Image

from llm_aai.agents import (
    HeuristicAgent,
    HumanAgent,
    LLMAgent,
    RandomAgent,
    ReplayAgent,
    make_agent,
)
from llm_aai.agents.base import PriorTurn, TurnInput
from llm_aai.llm import LiteLLMClient, RetryPolicy
from llm_aai.llm.fake_server import FakeChatServer
from llm_aai.prompts import load_prompt

FAST = RetryPolicy(max_attempts=2, initial_wait_s=0.01, jitter=False)


def decode(part: dict) -> np.ndarray:
    data = part["image_url"]["url"].split(",", 1)[1]
    return np.asarray(Image.open(io.BytesIO(base64.b64decode(data))).convert("RGB"))


def episode_turn() -> TurnInput:
    frames = [np.full((24, 24, 3), 200 + i, dtype=np.uint8) for i in range(3)]
    return TurnInput(frames, "Your remaining health is 99.9.", preamble="Observation captured.")


def test_icl_request_sends_the_demonstration_before_the_first_observation():
    prompt = load_prompt("icl")
    example = prompt.example
    with FakeChatServer(["Go(5);", "Turn(90);"]) as server:
        agent = make_agent("openai/fake-vision", api_base=server.url, retry_policy=FAST)
        agent.start_episode(prompt.system_text, seed=0, prelude=prompt.prelude)
        agent.act(episode_turn())
        agent.act(TurnInput([np.zeros((24, 24, 3), np.uint8)], "Your remaining health is 96.9.",
                            preamble="Observation captured."))
    first = server.requests[0].body["messages"]
    scripts = list(example.scripts)
    assert first[0] == {"role": "system", "content": prompt.system_text}
    assert [m["role"] for m in first[1:]] == ["user", "assistant"] * len(scripts) + ["user"]
    assert [m["content"] for m in first if m["role"] == "assistant"] == scripts
    # Every demonstration picture, in order, pixel for pixel, before the episode's own.
    demo_images = [decode(p) for m in first[1:-1] if isinstance(m["content"], list)
                   for p in m["content"] if p["type"] == "image_url"]
    expected = [f for t in example.turns[:-1] for f in t.frames]
    assert len(demo_images) == len(expected) == 3 + len(scripts) - 1
    for got, want in zip(demo_images, expected, strict=True):
        np.testing.assert_array_equal(got, want)
    demo_texts = [p["text"] for m in first[1:-1] if isinstance(m["content"], list)
                  for p in m["content"] if p["type"] == "text"]
    assert demo_texts[:2] == ["Observation captured.", "Your remaining health is 99.9."]
    episode = first[-1]["content"]
    assert [p["type"] for p in episode] == ["text"] + ["image_url"] * 3 + ["text"]
    assert decode(episode[1])[0, 0, 0] == 200
    # The second call keeps the same prefix and adds the episode's exchange after it.
    second = server.requests[1].body["messages"]
    assert second[: len(first)] == first and second[len(first)]["content"] == "Go(5);"


def test_prelude_gets_its_own_cache_breakpoint():
    prompt = load_prompt("icl")
    client = LiteLLMClient("anthropic/claude-test", api_key="unused", retry_policy=FAST)
    agent = LLMAgent(client, prompt_caching=True)
    agent.start_episode(prompt.system_text, 0, prelude=prompt.prelude)
    agent.messages.append({"role": "user", "content": "Your remaining health is 99.9."})
    marked = [i for i, m in enumerate(agent.outgoing_messages())
              if isinstance(m["content"], list) and "cache_control" in m["content"][-1]]
    assert marked == [0, 2 * len(prompt.prelude), len(agent.messages) - 1]


def test_a_new_episode_starts_again_from_the_prelude():
    prior = (PriorTurn(TurnInput([np.zeros((8, 8, 3), np.uint8)], "h"), "Go(1);"),)
    client = LiteLLMClient("openai/x", api_base="http://127.0.0.1:9", api_key="k")
    agent = LLMAgent(client)
    agent.start_episode("sys", 0, prelude=prior)
    agent.messages.append({"role": "user", "content": "left over"})
    agent.start_episode("sys", 1, prelude=prior)
    assert [m["role"] for m in agent.messages] == ["system", "user", "assistant"]
    agent.start_episode("sys", 2)
    assert [m["role"] for m in agent.messages] == ["system"]


@pytest.mark.parametrize("factory", [
    lambda: HeuristicAgent(), lambda: RandomAgent(), lambda: ReplayAgent(["Go(1);"]),
    lambda: HumanAgent(io.StringIO("Go(1);\n"), io.StringIO()),
])
def test_built_in_agents_accept_and_ignore_a_prelude(factory):
    prelude = load_prompt("icl").prelude
    agent = factory()
    agent.start_episode("", 0, prelude=prelude)
    frame = np.full((64, 64, 3), 120, np.uint8)
    reply = agent.act(TurnInput([frame], "Your remaining health is 99.9."))
    assert reply.text
