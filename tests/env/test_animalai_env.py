"""The gymnasium env on the embedded backend: contract, determinism, arena switching, and
the script executor playing the Unity recording's first scripts through it."""

from __future__ import annotations

import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from llm_aai.env import ENV_ID, AnimalAIEnv, resolve_arena
from llm_aai.protocol import execute_script, run_initial_observations
from llm_aai.script import parse_script

RES = 64
# A spread of levels: plain goal, random positions, a multi-goal level, blackouts, level 10.
ARENAS = ["01-01-01", "01-24-02", "03-01-01", "07-01-01", "10-01-01"]


@pytest.fixture
def env(testbed_dir):
    env = AnimalAIEnv("01-01-01", resolution=RES, arenas_dir=testbed_dir, render_mode="rgb_array")
    yield env
    env.close()


@pytest.mark.parametrize("task", ARENAS)
def test_check_env_passes(testbed_dir, task):
    env = gymnasium.make(
        ENV_ID, arena=task, resolution=RES, arenas_dir=testbed_dir, render_mode="rgb_array"
    )
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            check_env(env.unwrapped)
        assert [str(w.message) for w in caught] == []
    finally:
        env.close()


def rollout(env, seed, n=40):
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(0)
    frames, positions, rewards = [obs["image"]], [info["position"]], []
    for _ in range(n):
        obs, reward, terminated, truncated, info = env.step(rng.integers(0, 3, size=2))
        frames.append(obs["image"])
        positions.append(info["position"])
        rewards.append(reward)
        if terminated or truncated:
            break
    return frames, positions, rewards


def test_same_seed_same_episode(testbed_dir):
    env = AnimalAIEnv("01-24-02", resolution=RES, arenas_dir=testbed_dir)
    try:
        first = rollout(env, seed=11)
        rollout(env, seed=12)  # something else in between
        again = rollout(env, seed=11)
    finally:
        env.close()
    assert len(first[0]) == len(again[0])
    assert all(np.array_equal(a, b) for a, b in zip(first[0], again[0], strict=True))
    assert first[1] == again[1] and first[2] == again[2]


def test_seeds_change_the_random_world(testbed_dir):
    env = AnimalAIEnv("01-24-02", resolution=RES, arenas_dir=testbed_dir)
    try:
        worlds = {env.reset(seed=s)[1]["world_seed"] for s in range(3)}
        images = [env.reset(seed=s)[0]["image"] for s in range(3)]
    finally:
        env.close()
    assert len(worlds) == 3
    assert not np.array_equal(images[0], images[1]) or not np.array_equal(images[1], images[2])


def test_spaces_and_step_contract(env):
    assert env.action_space == gymnasium.spaces.MultiDiscrete([3, 3])
    obs, info = env.reset(seed=0)
    assert obs in env.observation_space
    assert obs["image"].shape == (RES, RES, 3) and obs["health"].dtype == np.float32
    assert set(info) >= {"position", "velocity", "events", "arena", "world_seed"}
    obs, reward, terminated, truncated, info = env.step(np.array([1, 0]))
    assert isinstance(reward, float) and reward < 0
    assert (terminated, truncated) == (False, False)
    assert [e.kind for e in info["events"]] == ["decay"]


def test_goal_terminates_and_then_reset_is_required(env):
    env.reset(seed=0)  # 01-01-01: the agent faces a goal 2 m ahead
    for _ in range(30):
        obs, reward, terminated, truncated, info = env.step(np.array([1, 0]))
        if terminated:
            break
    assert terminated and not truncated and reward > 0.5
    assert info["end_reason"] == "good_goal"
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.array([0, 0]))


def test_options_switch_arena_and_keep_it(env, testbed_dir, recording_dir):
    _, info = env.reset(seed=0)
    assert info["position"] == pytest.approx((20.0, 0.51, 20.0))
    _, info = env.reset(seed=0, options={"arena": recording_dir / "arena.yaml"})
    assert info["position"] == pytest.approx((2.0, 0.51, 2.0))
    _, info = env.reset(seed=1)
    assert info["arena"] == str(recording_dir / "arena.yaml")
    _, info = env.reset(options={"arena": "01-01-01"})
    assert info["arena"] == str(testbed_dir / "01-01-01.yaml")


def test_render_views(testbed_dir):
    env = AnimalAIEnv("01-01-01", resolution=RES, arenas_dir=testbed_dir, render_mode="rgb_array",
                      render_view="overview", overview_size=96)
    try:
        obs, _ = env.reset(seed=0)
        overview = env.render()
        assert overview.shape == (96, 96, 3) and overview.dtype == np.uint8
    finally:
        env.close()
    quiet = AnimalAIEnv("01-01-01", resolution=RES, arenas_dir=testbed_dir)
    try:
        quiet.reset(seed=0)
        assert quiet.render() is None
    finally:
        quiet.close()


def test_gymnasium_make(testbed_dir):
    env = gymnasium.make(ENV_ID, arena=testbed_dir / "01-01-01.yaml", resolution=RES,
                         max_episode_steps=3)
    try:
        env.reset(seed=0)
        results = [env.step(np.array([0, 1])) for _ in range(3)]
        assert [r[3] for r in results] == [False, False, True]  # TimeLimit truncates
    finally:
        env.close()


def test_errors(env, testbed_dir, tmp_path, monkeypatch):
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.array([0, 0]))
    env.reset(seed=0)
    for bad in ([3, 0], [0, -1], [1], [[1, 0]]):
        with pytest.raises(ValueError, match="action"):
            env.step(np.array(bad))
    with pytest.raises(ValueError, match="unknown reset options"):
        env.reset(options={"arena_config": "x"})
    with pytest.raises(FileNotFoundError, match="arena file not found"):
        env.reset(options={"arena": tmp_path / "none.yaml"})
    with pytest.raises(ValueError, match="render_mode"):
        AnimalAIEnv("01-01-01", arenas_dir=testbed_dir, render_mode="human")
    with pytest.raises(ValueError, match="unknown backend"):
        AnimalAIEnv("01-01-01", arenas_dir=testbed_dir, backend="godot")
    monkeypatch.delenv("LLM_AAI_ARENAS", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # an empty testbed cache
    with pytest.raises(FileNotFoundError, match="not in the testbed cache .* downloading it"):
        resolve_arena("01-01-01")  # the first use, offline (tests/conftest.py)
    monkeypatch.setenv("LLM_AAI_ARENAS", str(testbed_dir))
    assert resolve_arena("01-01-01") == testbed_dir / "01-01-01.yaml"
    empty = AnimalAIEnv(resolution=RES)
    try:
        with pytest.raises(ValueError, match="no arena"):
            empty.reset(seed=0)
    finally:
        empty.close()


def test_executor_replays_the_recordings_health(recording_dir):
    """Initial protocol + the first 8 recorded scripts; health as the recording shows it."""
    env = AnimalAIEnv(recording_dir / "arena.yaml", resolution=RES)
    try:
        obs, _ = env.reset(seed=0)
        start = run_initial_observations(env, obs)
        assert len(start.observations) == 3
        assert round(start.first_observation_health, 1) == 99.9
        obs = start.outcome.observation
        lines = (recording_dir / "scripts.txt").read_text().splitlines()[:8]
        shown = []
        for line in lines:
            outcome = execute_script(env, parse_script(line), observation=obs)
            obs = outcome.observation
            shown.append(round(outcome.health, 1))
    finally:
        env.close()
    assert shown == [96.9, 96.7, 96.4, 96.1, 95.6, 94.7, 94.1, 93.2]


def test_play_without_observing_draws_no_frame_until_asked(env, monkeypatch):
    from llm_aai.sim import Simulator

    drawn = []
    real_observe = Simulator.observe
    monkeypatch.setattr(Simulator, "observe", lambda sim: drawn.append(1) or real_observe(sim))
    actions = [np.array([1, 1])] * 3  # short of the goal 2 m ahead
    env.reset(seed=4)
    seen, *_ = env.play(actions)
    env.reset(seed=4)
    drawn.clear()
    observation, reward, terminated, _, infos = env.play(actions, observe=False)
    assert observation is None and not terminated and drawn == []
    assert [info["health"] for info in infos] == sorted(
        (info["health"] for info in infos), reverse=True)
    later = env.observe()  # the same frame, drawn on demand
    assert len(drawn) == 1
    assert np.array_equal(later["image"], seen["image"])
    assert later["health"][0] == pytest.approx(infos[-1]["health"])
    assert np.array_equal(env.render(), seen["image"])
    assert len(drawn) == 1  # drawn once, kept


def test_play_without_observing_still_returns_the_frame_that_ends_the_episode(env):
    env.reset(seed=0)
    observation, _, terminated, _, infos = env.play([np.array([1, 0])] * 200, observe=False)
    assert terminated and observation is not None and observation["image"].shape == (RES, RES, 3)
    assert infos[-1]["end_reason"] is not None


def test_initial_observations_can_leave_the_last_frame_undrawn(env):
    from llm_aai.protocol import execute_actions

    observation, _ = env.reset(seed=2)
    drawn = run_initial_observations(env, observation)
    observation, _ = env.reset(seed=2)
    lazy = run_initial_observations(env, observation, observe_last=False)
    assert lazy.outcome.observation is None
    assert lazy.outcome.health == pytest.approx(drawn.outcome.health)
    assert lazy.outcome.steps == drawn.outcome.steps == 49
    for shown_lazy, shown_drawn in zip(lazy.observations, drawn.observations, strict=True):
        assert np.array_equal(shown_lazy["image"], shown_drawn["image"])
    # a first script that takes no step shows the frame after all
    outcome = execute_actions(env, [], observation=None)
    assert np.array_equal(outcome.observation["image"], drawn.outcome.observation["image"])
