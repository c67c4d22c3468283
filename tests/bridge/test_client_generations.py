"""Every ``animalai`` client generation on the bridge: 6.2.0 (channels-first images) and the
mlagents-envs 0.30 generation, 4.1.0 (the LLM-AAI paper's harness) and 3.0.5 (channels-last).

Each client runs ``clients/drive_animalai.py`` in its own interpreter against one launcher,
on one arena and seed, with one action sequence; the older ones in venvs built by
``client_venvs`` (slow on a clean machine: pip downloads them once).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from llm_aai.bridge.dialects import CHANNELS_FIRST, CHANNELS_LAST, dialect_for
from tests.helpers.arenas import write_arena

from .client_venvs import client_python
from .conftest import free_port

DRIVER = Path(__file__).parent / "clients" / "drive_animalai.py"
RESOLUTION = 48
SEED = 7
STEPS = 12
CLIENT_TIMEOUT = 90

RANDOM_LAYOUT = """
    !ArenaConfig
    arenas:
      0: !Arena
        timeLimit: 100
        items:
        - !Item
          name: Agent
        - !Item
          name: GoodGoal
          positions:
          - !Vector3 {x: -1, y: 0, z: -1}
        - !Item
          name: Wall
          positions:
          - !Vector3 {x: -1, y: 0, z: -1}
          - !Vector3 {x: -1, y: 0, z: -1}
"""
"""Everything placed at random: the same seed must give the same world to every client."""


def _drive(python: Path, launcher: Path, arena: Path, out: Path, *, seed: int = SEED) -> dict:
    result = subprocess.run(
        [str(python), str(DRIVER), str(launcher), str(free_port()), str(arena), str(out),
         "--seed", str(seed), "--resolution", str(RESOLUTION), "--steps", str(STEPS)],
        capture_output=True, text=True, timeout=CLIENT_TIMEOUT,
        env={**os.environ, "ANIMALAI_AUTO_DOWNLOAD": "0"})
    assert result.returncode == 0, result.stderr[-3000:]
    with np.load(out) as saved:
        run = {key: saved[key] for key in ("cameras", "health", "reward", "done")}
        run.update(json.loads(str(saved["info"])))
    run["log"] = result.stderr
    return run


@pytest.fixture(scope="module")
def arena(tmp_path_factory) -> Path:
    return write_arena(tmp_path_factory.mktemp("arena"), RANDOM_LAYOUT)


@pytest.fixture(scope="module")
def current(launcher, arena, tmp_path_factory) -> dict:
    """What animalai 6.2.0, this venv's client, receives."""
    return _drive(Path(sys.executable), launcher, arena, tmp_path_factory.mktemp("six") / "o.npz")


def test_dialect_follows_the_clients_mlagents_envs_version():
    assert dialect_for("0.30.0") == (CHANNELS_LAST, None)
    assert dialect_for("0.28.0") == (CHANNELS_LAST, None)
    assert dialect_for("1.0.0") == (CHANNELS_FIRST, None)
    newer, warning = dialect_for("2.1.0")
    assert newer == CHANNELS_FIRST and "newer than the bridge knows" in warning
    unknown, warning = dialect_for("")
    assert unknown == CHANNELS_FIRST and "not a version number" in warning
    assert CHANNELS_LAST.camera_shape(3, 84) == [84, 84, 3]
    assert CHANNELS_FIRST.camera_shape(1, 84) == [1, 84, 84]


def test_animalai_6_gets_channels_first_images(current):
    assert current["animalai"] == "6.2.0" and current["mlagents_envs"] == "1.0.0"
    assert current["shapes"] == [[3, RESOLUTION, RESOLUTION], [7]]
    assert current["cameras"].shape == (STEPS + 1, 3, RESOLUTION, RESOLUTION)
    assert "channels-first" in current["log"]


@pytest.mark.slow
@pytest.mark.parametrize("client", ["animalai-4.1.0", "animalai-3.0.5"])
def test_older_client_gets_channels_last_images_and_the_same_episode(
        client, current, launcher, arena, tmp_path):
    """The mlagents-envs 0.30 clients decode (H, W, C) and check it against the declared
    shape; before the bridge read the client's version they failed in the constructor with
    "decompressed had (48, 48, 3) but expected [3, 48, 48]". Same arena, seed and actions as
    the 6.2.0 client: the same pixels (transposed), health, reward and episode end."""
    old = _drive(client_python(client), launcher, arena, tmp_path / "o.npz")
    assert old["animalai"] == client.split("-")[1] and old["mlagents_envs"] == "0.30.0"
    assert old["shapes"] == [[RESOLUTION, RESOLUTION, 3], [7]]
    assert old["cameras"].shape == (STEPS + 1, RESOLUTION, RESOLUTION, 3)
    assert "channels-last" in old["log"]
    np.testing.assert_array_equal(old["cameras"], np.moveaxis(current["cameras"], 1, -1))
    np.testing.assert_array_equal(old["health"], current["health"])
    np.testing.assert_array_equal(old["reward"], current["reward"])
    np.testing.assert_array_equal(old["done"], current["done"])
    assert old["health"][0] == 100.0 and old["health"][-1] < 100.0
    assert old["cameras"].std() > 0.01  # pictures, not blank frames


def test_seed_changes_the_world_so_the_comparison_means_something(current, launcher, arena,
                                                                   tmp_path):
    other = _drive(Path(sys.executable), launcher, arena, tmp_path / "o.npz", seed=SEED + 1)
    assert not np.array_equal(other["cameras"][0], current["cameras"][0])
