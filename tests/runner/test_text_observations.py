"""``--observation text|both`` end to end: what each request to the model carries."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest

from llm_aai.agents.heuristic import HeuristicAgent
from llm_aai.agents.text_reading import read_view
from llm_aai.frames import read_frame
from llm_aai.llm.fake_server import FakeChatServer
from llm_aai.logs.store import read_turns
from llm_aai.perception import NOTHING
from llm_aai.protocol import PAPER_PROTOCOL
from llm_aai.runner import ModelOptions, RunConfig, RunError, start_run
from llm_aai.settings import read_settings
from tests.helpers.arenas import goal_ahead

TASK = "01-04-03"  # a green ball in the open, in front of the agent


def _run(testbed_dir, tmp_path, url, **changes):
    config = RunConfig(model="openai/fake", tasks=TASK, arenas_dir=testbed_dir, resolution=64,
                       protocol=dataclasses.replace(PAPER_PROTOCOL, max_scripts=2,
                                                    run_out_clock=False),
                       model_options=ModelOptions(api_base=url, max_tokens=256), **changes)
    return start_run(config, out=tmp_path, run_id="r", show_progress=False)


def _user_content(request):
    """The last user message's parts: (texts, number of images)."""
    content = request.body["messages"][-1]["content"]
    parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
    texts = [p["text"] for p in parts if p["type"] == "text"]
    images = sum(1 for p in parts if p["type"] == "image_url")
    return "\n".join(texts), images


@pytest.mark.parametrize(("observation", "images_first", "images_later"),
                         [("text", 0, 0), ("both", 3, 1), ("image", 3, 1)])
def test_each_request_carries_what_the_observation_mode_says(testbed_dir, tmp_path, observation,
                                                             images_first, images_later):
    with FakeChatServer(default="Turn(30);") as server:
        outcome = _run(testbed_dir, tmp_path, server.url, observation=observation)
        requests = list(server.requests)
    assert [r.end_reason for r in outcome.results] == ["script_cap"]
    assert len(requests) == 2  # two scripts, both turns in place
    (first, n_first), (later, n_later) = (_user_content(r) for r in requests)
    assert (n_first, n_later) == (images_first, images_later)
    assert re.search(r"\nYour remaining health is \d+\.\d\.$", first)
    if observation == "image":
        assert "You see" not in first + later
        return
    assert "- a green ball (" in first  # in view at the start of 01-04-03
    view = read_view(first)
    ball = next(o for o in view.objects if o.noun == "green ball")
    assert ball.distance > 1
    turned = next((o for o in read_view(later).objects if o.noun == "green ball"), None)
    assert turned is None or turned.bearing < ball.bearing - 20  # 30° right: it moved left
    assert read_settings(outcome.run_dir).config.observation == observation


def test_allocentric_text_gives_the_pose(testbed_dir, tmp_path):
    with FakeChatServer(default="Go(1);") as server:
        _run(testbed_dir, tmp_path, server.url, observation="text", perspective="allocentric")
        text, images = _user_content(server.requests[0])
    assert images == 0
    assert text.splitlines()[1].startswith("You are at x ")  # after the preamble
    assert "centre at x " in text


def test_text_needs_the_embedded_backend(testbed_dir, tmp_path):
    with pytest.raises(RunError, match="needs the embedded backend"):
        _run(testbed_dir, tmp_path, "http://127.0.0.1:9", observation="text", backend="unity")
    assert not (tmp_path / "r").exists()


def test_the_heuristic_plays_from_text_alone_and_reaches_the_ball(testbed_dir, tmp_path):
    config = RunConfig(model="heuristic", tasks=TASK, arenas_dir=testbed_dir, resolution=64,
                       observation="text")
    outcome = start_run(config, out=tmp_path, run_id="h", show_progress=False)
    result = outcome.results[0]
    assert result.end_reason == "good_goal" and result.passed
    turns = [json.loads(line) for line in
             (outcome.run_dir / "episodes" / f"{TASK}_t1" / "turns.jsonl").read_text().splitlines()]
    sent = [t for t in turns if t.get("reply")]
    assert sent and all(t["sent_images"] == [] for t in sent)
    assert "green ball" in sent[0]["sent_text"]


def test_the_heuristic_refuses_a_turn_with_neither_image_nor_view():
    from llm_aai.agents.base import TurnInput

    agent = HeuristicAgent()
    agent.start_episode("", 0)
    with pytest.raises(ValueError, match="no text observation or map"):
        agent.act(TurnInput(images=[], text="Your remaining health is 100.0."))


BLACKOUT_ARENA = goal_ahead(agent=(20, 5), goal=(20, 35), blackouts="[-3]")


def test_a_blackout_says_you_see_nothing_when_the_picture_goes_black(tmp_path):
    """The lights toggle every 15 physics steps (5 AAI steps); one step per script."""
    arenas = tmp_path / "arenas"
    arenas.mkdir()
    (arenas / f"{TASK}.yaml").write_text(BLACKOUT_ARENA)
    with FakeChatServer(default="Go(1);") as server:
        config = RunConfig(model="openai/fake", tasks=TASK, arenas_dir=arenas, resolution=64,
                           observation="both",
                           protocol=dataclasses.replace(PAPER_PROTOCOL, max_scripts=14,
                                                        run_out_clock=False),
                           model_options=ModelOptions(api_base=server.url, max_tokens=64))
        outcome = start_run(config, out=tmp_path, run_id="dark", show_progress=False)
    episode = outcome.run_dir / "episodes" / f"{TASK}_t1"
    seen = []
    for turn in (t for t in read_turns(episode) if t.reply is not None):
        black = read_frame(episode / turn.sent_images[-1]).max() < 16
        said_nothing = NOTHING in turn.sent_text.splitlines()
        assert black == said_nothing, (turn.turn, turn.sent_text)
        assert said_nothing or "- a green ball (1 m across), " in turn.sent_text
        seen.append(black)
    assert True in seen and False in seen  # both dark and lit turns were sent


@pytest.mark.parametrize(("model", "passes"), [("heuristic", True), ("random", None),
                                               ("oracle", True)])
def test_the_built_in_agents_play_every_probe_offline(testbed_dir, tmp_path, model, passes):
    """Text in either frame, and the plan: no model, no image needed."""
    for run_id, changes in (("text", {"observation": "text"}),
                            ("allo", {"observation": "text", "perspective": "allocentric"}),
                            ("plan", {"prompt": "plan", "observation": "text"})):
        outcome = start_run(RunConfig(model=model, tasks=TASK, arenas_dir=testbed_dir,
                                      resolution=64, oracle_budget=2000 if model == "oracle"
                                      else None, **changes),
                            out=tmp_path, run_id=run_id, show_progress=False)
        [result] = outcome.results
        assert result.end_reason != "infrastructure", (run_id, result.infra_error)
        if passes and run_id != "plan":  # the heuristic's one-script plan need not pass
            assert result.passed, (model, run_id)
    if model == "oracle":
        assert result.passed  # its plan, open-loop, reaches the ball
