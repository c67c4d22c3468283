"""Fixtures for driving the bridge with the real ``animalai`` 6.2.0 client.

``make test`` installs animalai and mlagents-envs-aai (``make animalai``); these tests need
them and fail at import without them rather than skip, so CI cannot pass without running them.
"""

from __future__ import annotations

import socket
import textwrap
from pathlib import Path

import pytest

from llm_aai.bridge.launcher import install


@pytest.fixture(scope="session")
def launcher(tmp_path_factory) -> Path:
    """The bridge launcher, installed once (``DIR/AAI.x86_64``)."""
    return install(tmp_path_factory.mktemp("bridge") / "env")


def free_port() -> int:
    """A TCP port nobody listens on now (animalai's server will take it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("localhost", 0))
        return probe.getsockname()[1]


@pytest.fixture
def port() -> int:
    """A fresh base port per test (worker 0 listens on it)."""
    return free_port()


def write_arena(folder: Path, text: str, name: str = "arena.yml") -> Path:
    """Write an arena file (dedented) and return its path."""
    path = folder / name
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


GOAL_AHEAD = """
    !ArenaConfig
    arenas:
      0: !Arena
        timeLimit: 250
        items:
        - !Item
          name: Agent
          positions:
          - !Vector3 {x: 20, y: 0, z: 10}
          rotations: [0]
        - !Item
          name: GoodGoal
          positions:
          - !Vector3 {x: 20, y: 0, z: 16}
          sizes:
          - !Vector3 {x: 2, y: 2, z: 2}
"""
"""An agent facing a green ball 6 m ahead: a few forward steps reach it."""
