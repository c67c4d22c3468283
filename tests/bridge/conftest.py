"""Fixtures for driving the bridge with the real ``animalai`` 6.2.0 client.

``make test`` installs animalai and mlagents-envs-aai (``make animalai``); these tests need
them and fail at import without them rather than skip, so CI cannot pass without running them.
"""

from __future__ import annotations

import socket
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


