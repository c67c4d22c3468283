"""Helpers for the modes' tests: runs through the run library, the simulator and the fake server.

Every run here goes over HTTP to ``llm_aai.llm.fake_server`` (model ``openai/fake``), so what
a test asserts about a request is what a provider would have received.
"""

from __future__ import annotations

import base64
import hashlib
import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

from llm_aai.agents.vision import classify_hsv, hsv
from llm_aai.logs.schema import EpisodeResult, TurnRecord


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
