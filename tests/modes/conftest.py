"""Fixtures: one-episode runs of a mode through the run library and the fake server."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from llm_aai.llm.fake_server import FakeChatServer
from llm_aai.logs import read_turns
from llm_aai.logs.store import read_result
from llm_aai.runner import ModelOptions, RunConfig, start_run
from tests.helpers.arenas import goal_ahead

from .helpers import ModeRun


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
