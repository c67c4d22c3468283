"""``--prompt plan`` end to end: one request with the arena's map, the plan run open-loop."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from llm_aai.llm.fake_server import FakeChatServer
from llm_aai.logs.store import read_turns
from llm_aai.perception.arena_map import describe_arena
from llm_aai.plans.evaluate import evaluate_plan_episode, logged_script
from llm_aai.plans.metrics import ReferencePlan
from llm_aai.protocol import PAPER_PROTOCOL
from llm_aai.runner import ModelOptions, RunConfig, RunError, start_run
from llm_aai.settings import read_settings
from llm_aai.sim import Simulator
from tests.helpers.arenas import arena, obj

TASK = "01-04-03"


def _run(testbed_dir, tmp_path, url, **changes):
    config = RunConfig(model="openai/fake", tasks=TASK, arenas_dir=testbed_dir, resolution=64,
                       prompt="plan", model_options=ModelOptions(api_base=url, max_tokens=256),
                       **changes)
    return start_run(config, out=tmp_path, run_id="p", show_progress=False)


def _last_user(request):
    content = request.body["messages"][-1]["content"]
    parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
    return ("\n".join(p["text"] for p in parts if p["type"] == "text"),
            sum(1 for p in parts if p["type"] == "image_url"))


def test_the_map_lists_every_object_with_pose_in_a_stable_order():
    placed = arena(obj("GoodGoal", (30.0, 0.0, 35.0), (1.0, 1.0, 1.0)),
                   obj("Wall", (10.0, 0.0, 25.0), (4.0, 2.0, 1.0), yaw=45.0,
                       color=(0.0, 0.0, 1.0)),
                   obj("DeathZone", (20.0, 0.0, 10.0), (4.0, 0.5, 2.0)), yaw=90.0)
    sim = Simulator(render=False)
    sim.load(placed, np.random.default_rng(0))
    text = describe_arena(*sim.layout())
    lines = text.splitlines()
    assert lines[0] == "Map of the arena: a square 40 m by 40 m, fenced on all four sides."
    assert lines[1].startswith("You are at x 20, z 20, facing 90°")
    assert lines[3:] == [
        "- a red death zone (4 m by 2 m on the floor), centre at x 20, z 10",
        "- a blue wall (4 m wide, 2 m tall, 1 m deep), centre at x 10, z 25, rotated 45°",
        "- a green ball (1 m across), centre at x 30, z 35",
    ]  # every object, seen or not (the ball and the zone are behind the agent's back)


@pytest.mark.parametrize(("observation", "images"), [("image", 1), ("text", 0)])
def test_one_request_carries_the_map_and_the_plan_runs_out_the_clock(testbed_dir, tmp_path,
                                                                     observation, images):
    with FakeChatServer(default='Think("plan");Turn(-30);Go(5);') as server:
        outcome = _run(testbed_dir, tmp_path, server.url, observation=observation)
        requests = list(server.requests)
    assert len(requests) == 1  # the plan is the only reply
    text, sent_images = _last_user(requests[0])
    assert sent_images == images
    assert "Map of the arena" in text and "- a green ball (1 m across), centre at x " in text
    assert "You see:" not in text  # the map replaces the view
    assert "Planning ahead" in requests[0].body["messages"][0]["content"]
    result = outcome.results[0]
    assert result.scripts_used == 1 and result.end_reason == "time_limit"
    # the plan prompt's preset: the run plays, and records, one script
    assert read_settings(outcome.run_dir).config.protocol.max_scripts == 1


def test_the_plan_needs_the_embedded_backend(testbed_dir, tmp_path):
    with pytest.raises(RunError, match="--prompt plan needs the embedded backend"):
        _run(testbed_dir, tmp_path, "http://127.0.0.1:9", backend="unity")


def test_a_logged_plan_is_scored_by_driving_it_again(testbed_dir, tmp_path):


    plan = "Go(100);Go(100);Go(100);Go(100);"  # straight on into the fence
    with FakeChatServer(default=plan) as server:
        outcome = _run(testbed_dir, tmp_path, server.url)
    episode = outcome.run_dir / "episodes" / f"{TASK}_t1"
    protocol = dataclasses.replace(PAPER_PROTOCOL, max_scripts=1)
    logged = read_turns(episode)[1]
    script = logged_script(logged.commands)
    metrics = evaluate_plan_episode(episode, testbed_dir / f"{TASK}.yaml", protocol,
                                    reference=ReferencePlan(script, logged.steps, False))
    assert metrics.executable and not metrics.passed
    assert metrics.wall_hit == 1 and metrics.violations == 1  # one long push against it
    # the arena's time limit cut the plan; the replay took exactly the logged steps
    assert metrics.steps == logged.steps < 400
    assert (metrics.lcs, metrics.command_f1) == (1.0, 1.0)


def test_an_unparsed_plan_is_not_executable(testbed_dir, tmp_path):


    with FakeChatServer(default="I would rather not.") as server:
        outcome = _run(testbed_dir, tmp_path, server.url)
    episode = outcome.run_dir / "episodes" / f"{TASK}_t1"
    metrics = evaluate_plan_episode(episode, testbed_dir / f"{TASK}.yaml",
                                    dataclasses.replace(PAPER_PROTOCOL, max_scripts=1))
    assert not metrics.executable and metrics.violations == 0 and metrics.lcs is None
