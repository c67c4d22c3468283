"""Helpers for the modes' tests: runs through the run library, the simulator and the fake server.

Every run here goes over HTTP to ``llm_aai.llm.fake_server`` (model ``openai/fake``), so what
a test asserts about a request is what a provider would have received. The fixtures
``mode_arena`` and ``run_mode`` are registered for every test by ``tests/conftest.py``; the
resume helpers give a model whose replies depend only on what it is sent, and a run
directory as comparable data (what a resumed run must reproduce).
"""

from __future__ import annotations

import base64
import hashlib
import io
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from llm_aai.agents.vision import classify_hsv, hsv
from llm_aai.llm.fake_server import FakeChatServer
from llm_aai.logs import RunStore, read_turns
from llm_aai.logs.schema import EpisodeResult, TurnRecord, to_dict
from llm_aai.logs.store import read_result
from llm_aai.runner import ModelOptions, RunConfig, start_run
from tests.helpers.arenas import goal_ahead


@dataclass(frozen=True)
class ModeRun:
    """A finished one-episode run: what was sent, what was logged."""

    run_dir: Path
    bodies: list[dict]
    turns: list[TurnRecord]
    result: EpisodeResult

    def user_messages(self, request: int) -> list[dict]:
        return [m for m in self.bodies[request]["messages"] if m["role"] == "user"]

    def last_user(self, request: int) -> dict:
        return self.user_messages(request)[-1]


def images_of(message: dict) -> list[np.ndarray]:
    """The images of a chat message as sent (decoded from their data URLs)."""
    images = []
    for part in message["content"]:
        if part.get("type") == "image_url":
            data = part["image_url"]["url"].split(",", 1)[1]
            images.append(np.asarray(Image.open(io.BytesIO(base64.b64decode(data))).convert("RGB")))
    return images


def text_of(message: dict) -> str:
    content = message["content"]
    if isinstance(content, str):
        return content
    return "\n".join(part["text"] for part in content if part.get("type") == "text")


def green_pixels(image: np.ndarray) -> int:
    """How much of a frame the green goal covers (the heuristic's colour classifier)."""
    return int(classify_hsv(*hsv(image))["green"].sum())




GOLDEN_REPLIES = ['Think("A first look.");Turn(90);Go(5);', "Go(3)", 'Think("Only a thought.");',
                  "Turn(-48);Go(12);"]
"""The replies of the golden request sequence: a script, an invalid reply, a thought only
(no step: the same frame again), a script again."""


def request_sequence(bodies: list[dict]) -> list[dict]:
    """Requests as comparable data: each message's role, texts and image sha256 in order."""
    sequence = []
    for body in bodies:
        messages = []
        for message in body["messages"]:
            content = message["content"]
            parts = [content] if isinstance(content, str) else [
                part["text"] if part.get("type") == "text"
                else "image sha256 " + hashlib.sha256(
                    part["image_url"]["url"].encode("ascii")).hexdigest()
                for part in content]
            messages.append({"role": message["role"], "parts": parts})
        sequence.append({"model": body["model"], "temperature": body.get("temperature"),
                         "max_tokens": body.get("max_tokens"), "messages": messages})
    return sequence


def golden_requests(arenas_dir: Path, out: Path) -> list[dict]:
    """Play task 01-04-03 in the paper's mode, the fake model answering ``GOLDEN_REPLIES``."""
    from llm_aai.llm.fake_server import FakeChatServer
    from llm_aai.protocol import EpisodeProtocol
    from llm_aai.runner import ModelOptions, RunConfig, start_run

    with FakeChatServer(GOLDEN_REPLIES) as server:
        config = RunConfig(model="openai/fake", tasks="01-04-03", arenas_dir=arenas_dir,
                           resolution=64, protocol=EpisodeProtocol(max_scripts=len(GOLDEN_REPLIES)),
                           model_options=ModelOptions(api_base=server.url, max_retries=0))
        start_run(config, out=out, run_id="golden", show_progress=False)
        return request_sequence([request.body for request in server.requests])


SCRIPT_REPLIES = ('Think("Look left.");Turn(-30);Go(4);', "Go(3)",
                  'Think("Ahead.");Turn(24);Go(6);')
"""A script, an invalid reply (no semicolon: feedback and a no-op), another script."""
ACTION_REPLIES = ('Think("Turning.");left x3', "forward x9", "forward-right x4")
"""A turn, an invalid reply (beyond the repeat bound), a move."""


def by_user_count(body: dict[str, Any], replies: tuple[str, ...] = SCRIPT_REPLIES) -> str:
    """A reply chosen by how many user messages the request holds.

    It depends on nothing but the request, so a resumed run that sends the same requests as
    an uninterrupted one is answered the same, whatever happened in between.
    """
    users = sum(message["role"] == "user" for message in body["messages"])
    return replies[users % len(replies)]


def by_user_count_action(body: dict[str, Any]) -> str:
    """``by_user_count`` with per-action replies."""
    return by_user_count(body, ACTION_REPLIES)


def run_record(run_dir: Path) -> dict[str, Any]:
    """Every sealed episode's result and turns, and the sha256 of every frame file.

    Times (the episode's duration, each call's latency) differ between any two runs and are
    left out; everything the model was sent and did, and what it cost, is kept.
    """
    record = {}
    for episode_id, result in sorted(RunStore(run_dir).finished_results().items()):
        directory = run_dir / "episodes" / episode_id
        turns = []
        for turn in read_turns(directory):
            data = to_dict(turn)
            data["usage"] = {k: v for k, v in data["usage"].items() if k != "latency_s"}
            turns.append(data)
        frames = {path.name: hashlib.sha256(path.read_bytes()).hexdigest()
                  for path in sorted((directory / "frames").iterdir())}
        result_data = {k: v for k, v in to_dict(result).items() if k != "duration_s"}
        record[episode_id] = {"result": result_data, "turns": turns, "frames": frames}
    return record


@pytest.fixture
def mode_arena(tmp_path):
    """Write an arena: the agent at (20, 10) facing +z, a 2 m green goal where asked."""

    def make(t: int = 1000, goal: tuple[float, float] = (20, 16)) -> Path:
        directory = tmp_path / "arenas"
        directory.mkdir(exist_ok=True)
        path = directory / f"mode_t{t}_{goal[0]}_{goal[1]}.yaml"
        path.write_text(goal_ahead(t=t, pass_mark=0, goal=goal, goal_size=2))
        return path

    return make


@pytest.fixture
def run_mode(tmp_path, monkeypatch):
    """Play one episode of ``arena`` with the fake model answering ``replies``."""
    counter = iter(range(1000))

    def run(arena: Path, replies: list[str], *, default: str | None = None,
            **settings) -> ModeRun:
        # the arena is played as the testbed task it is named for, so the run library's own
        # task selection and checksums apply
        arenas = tmp_path / f"testbed-{next(counter)}"
        arenas.mkdir()
        (arenas / "01-04-03.yaml").write_text(arena.read_text())
        config = RunConfig(model="openai/fake", tasks="01-04-03", arenas_dir=arenas,
                           resolution=64, model_options=ModelOptions(max_retries=0))
        config = replace(config, **settings)  # together: the config checks them together
        with FakeChatServer(replies, default=default) as server:
            config = replace(config, model_options=replace(config.model_options,
                                                           api_base=server.url))
            outcome = start_run(config, out=tmp_path / "runs", show_progress=False)
            bodies = [request.body for request in server.requests]
        episode = outcome.run_dir / "episodes" / "01-04-03_t1"
        return ModeRun(outcome.run_dir, bodies, read_turns(episode), read_result(episode))

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    return run
