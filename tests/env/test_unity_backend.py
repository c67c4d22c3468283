"""The unity backend at its boundary with ``animalai``.

Most tests here use a TEST DOUBLE of the animalai API, not the real package or a Unity
player: ``FakeAnimalAIEnvironment`` below is installed as ``animalai.environment`` through
``sys.modules``. It records its constructor arguments and the actions it receives and
returns scripted observations in either camera layout (channels-last float, as older
clients return, or channels-first float, as mlagents-envs-aai 1.0 returns), so we check what
the backend sends and how it reads replies, not Unity's behaviour.

The last test (marked ``unity``) runs the real player; it is skipped unless the environment
variable LLM_AAI_UNITY_BUILD points at a Unity build. See llm_aai/env/backends/unity.py.
"""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from llm_aai.env.backends.base import Backend
from llm_aai.env.backends.unity import UnityBackend, UnityUnavailable, camera_to_uint8

RES = 8
BEHAVIOR = "AnimalAI?team=0"


class FakeActionTuple:
    def __init__(self, n_agents: int) -> None:
        self.discrete = np.zeros((n_agents, 2), dtype=np.int32)

    def add_discrete(self, discrete: np.ndarray) -> None:
        self.discrete = discrete.astype(np.int32)


class FakeSteps:
    def __init__(self, obs, reward, interrupted=None) -> None:
        self.obs = obs
        self.reward = np.asarray(reward, dtype=np.float32)
        self.interrupted = np.asarray(interrupted if interrupted is not None else [], dtype=bool)


class FakeAnimalAIEnvironment:
    """Double of animalai.environment.AnimalAIEnvironment (constructor resets, like 6.2.0)."""

    instances: list[FakeAnimalAIEnvironment] = []
    layout = "chw"
    end_after = 5
    raise_on_init: Exception | None = None

    def __init__(self, **kwargs) -> None:
        if self.raise_on_init is not None:
            raise self.raise_on_init
        self.kwargs = kwargs
        self.actions: list[tuple[int, int]] = []
        self.resets: list[str] = []
        self.closed = False
        spec = types.SimpleNamespace(
            action_spec=types.SimpleNamespace(empty_action=FakeActionTuple)
        )
        self.behavior_specs = {BEHAVIOR: spec}
        self._pending = None
        FakeAnimalAIEnvironment.instances.append(self)
        self.reset(kwargs["arenas_configurations"])

    def _obs(self):
        k = len(self.actions)
        hwc = np.zeros((RES, RES, 3), dtype=np.float32)
        hwc[..., 0] = k / 10  # red encodes the step count
        hwc[0, 0] = (1.0, 0.5, 0.0)
        camera = hwc if self.layout == "hwc" else np.moveaxis(hwc, -1, 0)
        vector = np.array([100 - 0.06 * k, 0.1, 0.0, 1.5 * k, 2.0, 0.49, 2.0 + k], np.float32)
        return [camera[None], vector[None]]

    def reset(self, arenas_configurations="") -> None:
        self.resets.append(arenas_configurations)
        self.actions.clear()
        self._pending = (FakeSteps(self._obs(), [0.0]), FakeSteps([], [], []))

    def set_actions(self, behavior, action) -> None:
        assert behavior == BEHAVIOR
        assert action.discrete.dtype == np.int32 and action.discrete.shape == (1, 2)
        self._next = tuple(int(v) for v in action.discrete[0])

    def step(self) -> None:
        self.actions.append(self._next)
        if len(self.actions) >= self.end_after:
            empty = FakeSteps([np.zeros((0, 3, RES, RES)), np.zeros((0, 7))], [])
            self._pending = (empty, FakeSteps(self._obs(), [1.0], [False]))
        else:
            self._pending = (FakeSteps(self._obs(), [-0.0006]), FakeSteps([], [], []))

    def get_steps(self, behavior):
        assert behavior == BEHAVIOR
        return self._pending

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def fake_animalai(monkeypatch):
    FakeAnimalAIEnvironment.instances = []
    FakeAnimalAIEnvironment.layout = "chw"
    FakeAnimalAIEnvironment.end_after = 5
    FakeAnimalAIEnvironment.raise_on_init = None
    package = types.ModuleType("animalai")
    module = types.ModuleType("animalai.environment")
    module.AnimalAIEnvironment = FakeAnimalAIEnvironment
    package.environment = module
    monkeypatch.setitem(sys.modules, "animalai", package)
    monkeypatch.setitem(sys.modules, "animalai.environment", module)
    return FakeAnimalAIEnvironment


@pytest.fixture
def build(tmp_path) -> Path:
    exe = tmp_path / "animalAI.x86_64"
    exe.write_text("not a real player; the double never runs it")
    return exe


@pytest.fixture
def arena(recording_dir) -> Path:
    return recording_dir / "arena.yaml"


def test_missing_package_names_the_extra_and_the_python(monkeypatch):
    monkeypatch.setitem(sys.modules, "animalai", None)
    monkeypatch.setitem(sys.modules, "animalai.environment", None)
    with pytest.raises(UnityUnavailable) as info:
        UnityBackend()
    message = str(info.value)
    assert "pip install 'llm-aai[unity]'" in message
    if sys.version_info < (3, 14):
        version = ".".join(map(str, sys.version_info[:3]))
        assert "Python >= 3.14" in message and version in message


def test_missing_build_is_one_clear_error(fake_animalai, tmp_path):
    with pytest.raises(UnityUnavailable, match="no Animal-AI Unity build at .*nowhere"):
        UnityBackend(tmp_path / "nowhere" / "animalAI.x86_64")


def test_animalai_finding_no_build_becomes_unity_unavailable(fake_animalai, arena):
    fake_animalai.raise_on_init = FileNotFoundError("Could not find any AAI environment binary.")
    backend = UnityBackend(None)
    with pytest.raises(UnityUnavailable, match="found no Unity build"):
        backend.reset(arena, seed=0)


def test_constructor_arguments_reach_animalai(fake_animalai, build, arena):
    backend = UnityBackend(build, resolution=RES, worker_id=3, base_port=6000, timescale=2)
    assert isinstance(backend, Backend)
    backend.reset(arena, seed=7)
    (env,) = fake_animalai.instances
    assert env.kwargs == {
        "file_name": str(build),
        "arenas_configurations": str(arena.resolve()),
        "seed": 7,
        "resolution": RES,
        "useCamera": True,
        "useRayCasts": False,
        "play": False,
        "worker_id": 3,
        "base_port": 6000,
        "no_graphics": False,
        "log_folder": "",
        "timeout": None,
        "timescale": 2,
    }


@pytest.mark.parametrize("layout", ["hwc", "chw"])
def test_both_camera_layouts_give_the_same_uint8_image(fake_animalai, build, arena, layout):
    fake_animalai.layout = layout
    backend = UnityBackend(build, resolution=RES)
    first = backend.reset(arena, seed=0)
    assert first.image.shape == (RES, RES, 3) and first.image.dtype == np.uint8
    assert tuple(first.image[0, 0]) == (255, 128, 0)
    assert first.health == pytest.approx(100.0) and first.reward == 0.0 and not first.done
    after = backend.step(1, 0)
    assert after.image[1, 1, 0] == round(0.1 * 255)
    assert after.health == pytest.approx(99.94, abs=1e-4)
    assert after.reward == pytest.approx(-0.0006)
    assert after.info["velocity"] == pytest.approx((0.1, 0.0, 1.5))
    assert after.info["position"] == pytest.approx((2.0, 0.49, 3.0))


def test_actions_are_sent_as_one_int32_row(fake_animalai, build, arena):
    backend = UnityBackend(build, resolution=RES)
    backend.reset(arena, seed=0)
    for action in [(1, 0), (0, 2), (2, 1)]:
        backend.step(*action)
    assert fake_animalai.instances[0].actions == [(1, 0), (0, 2), (2, 1)]
    with pytest.raises(ValueError, match="0, 1 or 2"):
        backend.step(3, 0)


def test_episode_end_comes_from_terminal_steps(fake_animalai, build, arena):
    fake_animalai.end_after = 2
    backend = UnityBackend(build, resolution=RES)
    backend.reset(arena, seed=0)
    assert not backend.step(1, 0).done
    last = backend.step(1, 0)
    assert last.done and last.reward == pytest.approx(1.0)
    assert last.info["interrupted"] is False
    with pytest.raises(RuntimeError, match="reset"):
        backend.step(0, 0)


def test_same_seed_reuses_the_player_new_seed_relaunches(fake_animalai, build, arena, testbed_dir):
    backend = UnityBackend(build, resolution=RES)
    backend.reset(arena, seed=1)
    other = testbed_dir / "01-01-01.yaml"
    backend.reset(other, seed=1)
    assert len(fake_animalai.instances) == 1
    assert fake_animalai.instances[0].resets[-1] == str(other.resolve())
    backend.reset(other, seed=2)
    first, second = fake_animalai.instances
    assert first.closed and not second.closed and second.kwargs["seed"] == 2
    backend.close()
    assert second.closed


def test_bad_arguments(fake_animalai, build, tmp_path):
    with pytest.raises(ValueError, match="no_graphics"):
        UnityBackend(build, no_graphics=True)
    with pytest.raises(ValueError, match="seed"):
        UnityBackend(build, seed=3)
    backend = UnityBackend(build)
    with pytest.raises(FileNotFoundError):
        backend.reset(tmp_path / "missing.yaml", seed=0)
    with pytest.raises(RuntimeError, match="reset"):
        backend.step(0, 0)


def test_camera_conversion_edge_cases():
    gray = np.full((1, 6, 6), 0.5, dtype=np.float32)
    assert camera_to_uint8(gray).shape == (6, 6, 3)
    rgba = np.zeros((6, 6, 4), dtype=np.uint8)
    assert camera_to_uint8(rgba).shape == (6, 6, 3)
    assert camera_to_uint8(np.full((6, 6, 3), 2.0))[0, 0, 0] == 255
    with pytest.raises(ValueError):
        camera_to_uint8(np.zeros((6, 6)))
    with pytest.raises(ValueError):
        camera_to_uint8(np.zeros((6, 6, 5)))


@pytest.mark.unity
@pytest.mark.skipif(
    not os.environ.get("LLM_AAI_UNITY_BUILD"),
    reason="set LLM_AAI_UNITY_BUILD to a Unity Animal-AI executable to run",
)
def test_real_unity_player_plays_the_recordings_first_script(recording_dir):
    """Needs the real player: the health after Go(3) matches the recording's table."""
    backend = UnityBackend(os.environ["LLM_AAI_UNITY_BUILD"], resolution=64)
    try:
        start = backend.reset(recording_dir / "arena.yaml", seed=0)
        assert start.image.shape == (64, 64, 3)
        last = start
        for _ in range(1 + 48):
            last = backend.step(0, 0)
        for _ in range(3):
            last = backend.step(1, 0)
        assert round(last.health, 1) == 96.9
    finally:
        backend.close()


def test_frame_is_the_last_decisions_camera_image(fake_animalai, build, arena):
    backend = UnityBackend(build, resolution=RES)
    with pytest.raises(RuntimeError, match="reset"):
        backend.frame()
    backend.reset(arena, seed=0)
    last = backend.step(1, 0, render=False)
    assert last.image is not None and np.array_equal(backend.frame(), last.image)
