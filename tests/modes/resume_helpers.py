"""Helpers for the resume tests: a model whose replies depend only on what it is sent, and a
run directory as comparable data (what a resumed run must reproduce)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from llm_aai.logs import RunStore, read_turns
from llm_aai.logs.schema import to_dict

SCRIPT_REPLIES = ('Think("Look left.");Turn(-30);Go(4);', "Go(3)",
                  'Think("Ahead.");Turn(24);Go(6);')
"""A script, an invalid reply (no semicolon: feedback and a no-op), another script."""
FRAME_REPLIES = ('Think("Turning.");left x3', "forward x9", "forward-right x4")
"""A turn, an invalid reply (beyond the repeat bound), a move."""


def by_user_count(body: dict[str, Any], replies: tuple[str, ...] = SCRIPT_REPLIES) -> str:
    """A reply chosen by how many user messages the request holds.

    It depends on nothing but the request, so a resumed run that sends the same requests as
    an uninterrupted one is answered the same, whatever happened in between.
    """
    users = sum(message["role"] == "user" for message in body["messages"])
    return replies[users % len(replies)]


def by_user_count_frame(body: dict[str, Any]) -> str:
    """``by_user_count`` with frame actions."""
    return by_user_count(body, FRAME_REPLIES)


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
