"""animalai's own gymnasium wrapper and LLM scaffold, unmodified, on the bridge."""

from __future__ import annotations

import warnings

import gymnasium
import numpy as np
import pytest
from animalai.environment import AnimalAIEnvironment
from animalai.wrappers.animalai_gymnasium import AnimalAIGymnasiumWrapper
from gymnasium.utils.env_checker import check_env

from tests.helpers.arenas import GOAL_AHEAD, write_arena


class ComparableInfo(gymnasium.Wrapper):
    """Drops ``info["step"]``: animalai's wrapper puts the raw ``DecisionSteps`` there, whose
    ``==`` (a Mapping's, over numpy arrays) raises, so gymnasium's determinism check cannot
    compare two infos whatever player is behind it. Observations, rewards and flags pass as is.
    """

    def reset(self, **kwargs):
        observation, info = self.env.reset(**kwargs)
        return observation, {k: v for k, v in info.items() if k != "step"}

    def step(self, action):
        *result, info = self.env.step(action)
        return (*result, {k: v for k, v in info.items() if k != "step"})


def test_gymnasium_wrapper_passes_gymnasiums_env_checker(launcher, port, tmp_path):
    arena = write_arena(tmp_path, GOAL_AHEAD)
    env = AnimalAIGymnasiumWrapper(
        AnimalAIEnvironment(file_name=str(launcher), base_port=port, resolution=32,
                            arenas_configurations=str(arena), timeout=30),
        uint8_visual=True)
    try:
        check_env(ComparableInfo(env), skip_render_check=True)
        observation, _ = env.reset(seed=1)
        assert observation["camera"].shape == (3, 32, 32)
        assert observation["camera"].dtype == np.uint8
        assert observation["health"] == 100.0
        for _ in range(30):
            observation, reward, terminated, truncated, _ = env.step(np.array([1, 0]))
            if terminated:
                break
        assert terminated and not truncated and reward > 1.9
    finally:
        env.close()


def _scripted_model():
    """Stands in for an LLM: replies whose last action word the scaffold's parser reads."""
    replies = ["I see a green ball straight ahead, so I move towards it. FORWARD"] * 40
    yield from replies


def _parse_action(reply: str, actions: list[str]) -> str:
    # the rule animalai's inspect/kaggle wrappers use: the last word that is an action
    for word in reply.split()[::-1]:
        cleaned = word.strip(".,!?;:'\"()[]{}")
        if cleaned in actions:
            return cleaned
    raise ValueError(reply)


def test_frame_by_frame_llm_scaffold_with_a_scripted_reply(launcher, port, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # "early development" notice
        from animalai.LLM_scaffolds import FrameByFrameScaffold

    arena = write_arena(tmp_path, GOAL_AHEAD)
    scaffold = FrameByFrameScaffold(AnimalAIEnvironment(
        file_name=str(launcher), base_port=port, resolution=64,
        arenas_configurations=str(arena), timeout=30))
    try:
        assert scaffold.last_frame.shape == (64, 64, 3)
        assert scaffold.last_frame.dtype == np.uint8
        model = _scripted_model()
        steps = 0
        while not scaffold.is_finished():
            frame, reward, done, info = scaffold.step(
                _parse_action(next(model), scaffold.available_actions))
            steps += 1
        assert info["done_reason"] == "env_terminal"
        assert scaffold.total_reward == pytest.approx(2 * 0.999 - steps * 3 / (5 * 250),
                                                      abs=1e-3)
        assert frame.shape == (64, 64, 3)
    finally:
        scaffold.close()
