"""The real ``animalai.environment.AnimalAIEnvironment`` driving the bridge over gRPC."""

from __future__ import annotations

import os

import numpy as np
import pytest
from animalai.environment import AnimalAIEnvironment
from animalai.raycastparser import RayCastObjects, RayCastParser
from mlagents_envs.base_env import ActionTuple
from mlagents_envs.exception import UnityEnvironmentException

from llm_aai.env import AnimalAIEnv
from tests.helpers.arenas import GOAL_AHEAD, write_arena

BEHAVIOR = "AnimalAI?team=0"
FORWARD = np.array([[1, 0]], dtype=np.int32)


def _env(launcher, port, arena="", **kwargs) -> AnimalAIEnvironment:
    kwargs.setdefault("resolution", 64)
    kwargs.setdefault("timeout", 30)
    return AnimalAIEnvironment(file_name=str(launcher), base_port=port,
                               arenas_configurations=str(arena), **kwargs)


def _step(env, action=FORWARD):
    env.set_actions(BEHAVIOR, ActionTuple(discrete=action))
    env.step()
    return env.get_steps(BEHAVIOR)


def test_reset_step_until_goal_reward_and_vector_as_aai_defines(launcher, port, tmp_path):
    arena = write_arena(tmp_path, GOAL_AHEAD)
    env = _env(launcher, port, arena, seed=5)
    process = env._process
    try:
        spec = env.behavior_specs[BEHAVIOR]
        assert [o.shape for o in spec.observation_specs] == [(3, 64, 64), (7,)]
        assert spec.action_spec.discrete_branches == (3, 3)
        decision, terminal = env.get_steps(BEHAVIOR)
        assert len(decision) == 1 and len(terminal) == 0
        first = env.get_obs_dict(decision.obs)
        assert first["health"] == 100.0
        np.testing.assert_allclose(first["position"], [20.0, 0.51, 10.0], atol=0.02)
        camera = decision.obs[0][0]
        assert camera.dtype == np.float32 and 0.0 <= camera.min() and camera.max() <= 1.0
        assert camera.std() > 0.01  # a picture, not a blank frame
        returned = 0.0
        for _ in range(60):
            decision, terminal = _step(env)
            if len(terminal):
                break
            # AAI: every physics step costs 1/(5 t) reward, a decision is 3 of them
            assert decision.reward[0] == pytest.approx(-3 / (5 * 250), abs=1e-6)
            returned += float(decision.reward[0])
            obs = env.get_obs_dict(decision.obs)
            assert obs["health"] == pytest.approx(100 + 100 * returned, abs=1e-3)
            assert obs["velocity"][2] > 0  # moving forward in its own frame
        else:
            pytest.fail("the agent never reached the goal 6 m ahead")
        assert not terminal.interrupted[0]
        # the 2 m ball pays its size (x 0.999), minus this step's decay
        assert terminal.reward[0] == pytest.approx(2 * 0.999 - 3 / (5 * 250), abs=1e-3)
        end = env.get_obs_dict(terminal.obs)
        assert 13.0 < end["position"][2] < 16.0
        # the next episode's first decision arrives with the terminal row (same arena again)
        assert len(decision) == 1
        restart = env.get_obs_dict(decision.obs)
        np.testing.assert_allclose(restart["position"], [20.0, 0.51, 10.0], atol=0.02)
    finally:
        env.close()
    assert process.poll() == 0  # the player exits on close


def test_84_px_frames_are_the_gymnasium_envs_bit_for_bit(launcher, port, tmp_path):
    """Both build the simulator for the resolution, so both draw small frames alike (no
    shadows, coarser curves: llm_aai.sim.render)."""
    arena = write_arena(tmp_path, GOAL_AHEAD)
    actions = [(1, 0), (1, 1), (0, 2), (1, 0), (2, 1)]
    gym_env = AnimalAIEnv(arena, resolution=84)
    try:
        expected = [gym_env.reset(seed=0)[0]["image"]]
        expected += [gym_env.step(np.array(action))[0]["image"] for action in actions]
    finally:
        gym_env.close()
    env = _env(launcher, port, arena, resolution=84)
    try:
        frames = [env.get_steps(BEHAVIOR)[0].obs[0][0]]
        for action in actions:
            frames.append(_step(env, np.array([action], dtype=np.int32))[0].obs[0][0])
    finally:
        env.close()
    assert len(frames) == len(expected) == len(actions) + 1
    for k, (camera, image) in enumerate(zip(frames, expected, strict=True)):
        np.testing.assert_array_equal(np.moveaxis(camera, 0, -1),
                                      image.astype(np.float32) / 255.0, err_msg=f"frame {k}")
    assert not np.array_equal(expected[0], expected[-1])  # the agent moved


def test_rays_follow_animalais_parser_layout(launcher, port, tmp_path):
    arena = write_arena(tmp_path, """
        !ArenaConfig
        arenas:
          0: !Arena
            timeLimit: 0
            items:
            - !Item
              name: Agent
              positions: [!Vector3 {x: 20, y: 0, z: 10}]
              rotations: [0]
            - !Item
              name: Wall
              positions: [!Vector3 {x: 20, y: 0, z: 20}]
              rotations: [0]
              sizes: [!Vector3 {x: 4, y: 3, z: 1}]
            - !Item
              name: BadGoal
              positions: [!Vector3 {x: 10, y: 0, z: 20}]
              sizes: [!Vector3 {x: 4, y: 4, z: 4}]
        """)
    env = _env(launcher, port, arena, useCamera=False, useRayCasts=True, raysPerSide=2,
               rayMaxDegrees=45)
    try:
        assert [o.shape for o in env.behavior_specs[BEHAVIOR].observation_specs] == [(100,), (7,)]
        decision, _ = env.get_steps(BEHAVIOR)
        rays = env.get_obs_dict(decision.obs)["rays"]
        parser = RayCastParser([RayCastObjects.IMMOVABLE, RayCastObjects.BADGOAL,
                                RayCastObjects.ARENA], 5)
        wall, bad, fence = parser.parse(rays)  # rows left to right in the parser's order
        centre = 2
        # the wall's near face is 9.5 m ahead of the agent's centre: 9.5 / 200 of the ray
        assert wall[centre] == pytest.approx(9.5 / 200, abs=0.002)
        assert bad[centre] == 0 and fence[centre] == 0
        # Rays go out at 90 (ahead), 67.5, 112.5, 45 and 135 degrees (right = 0); the parser
        # reorders them as [112.5, 135, 90, 45, 67.5]. The 4 m red ball, 45 degrees to the left
        # (10 m left, 10 m ahead), meets only the 135 degree ray, 12.8 m out at the ray's height.
        assert list(bad > 0) == [False, True, False, False, False]
        assert bad[1] == pytest.approx(12.8 / 200, abs=0.002)
        # the fence: 32.5 m away 22.5 degrees either side, 28.3 m at 45 degrees right
        assert fence[[0, 3, 4]] == pytest.approx([32.47 / 200, 28.28 / 200, 32.47 / 200],
                                                 abs=0.002)
        assert len(rays) == (18 + 2) * 5
    finally:
        env.close()


def test_grayscale_small_resolution_and_clamped_large_one(launcher, port, tmp_path):
    arena = write_arena(tmp_path, GOAL_AHEAD)
    env = _env(launcher, port, arena, resolution=16, grayscale=True)
    try:
        decision, _ = env.get_steps(BEHAVIOR)
        assert decision.obs[0].shape == (1, 1, 16, 16)
        assert decision.obs[0].std() > 0.01
    finally:
        env.close()
    env = _env(launcher, port + 1 if False else port, arena, resolution=600)
    try:  # the Unity player clamps the camera to 4-512 px, and so does the bridge
        assert env.behavior_specs[BEHAVIOR].observation_specs[0].shape == (3, 512, 512)
    finally:
        env.close()


def test_decision_period_sets_physics_steps_per_decision(launcher, port, tmp_path):
    arena = write_arena(tmp_path, GOAL_AHEAD)
    env = _env(launcher, port, arena, decisionPeriod=6)
    try:
        decision, _ = _step(env, np.array([[0, 0]], dtype=np.int32))
        assert decision.reward[0] == pytest.approx(-6 / (5 * 250), abs=1e-6)
    finally:
        env.close()


def _first_x(env) -> float:
    decision, _ = env.get_steps(BEHAVIOR)
    return round(float(env.get_obs_dict(decision.obs)["position"][0]))


THREE_ARENAS = """
    !ArenaConfig
    randomizeArenas: {random}
    arenas:
""" + "".join(f"""
      {k}: !Arena
        timeLimit: 100
        items:
        - !Item
          name: Agent
          positions: [!Vector3 {{x: {5 + 5 * k}, y: 0, z: 5}}]
          rotations: [0]
""" for k in range(3))


def test_arenas_play_in_order_across_resets_and_episode_ends(launcher, port, tmp_path):
    arena = write_arena(tmp_path, THREE_ARENAS.replace("{random}", "false"))
    env = _env(launcher, port, arena, useCamera=False)
    try:
        seen = [_first_x(env)]
        for _ in range(3):
            env.reset()
            seen.append(_first_x(env))
        assert seen == [5, 10, 15, 5]
        # running out of time (100 units = 500 physics steps) ends the episode and moves on
        for _ in range(200):
            decision, terminal = _step(env, np.array([[0, 0]], dtype=np.int32))
            if len(terminal):
                break
        assert len(terminal) == 1 and env.get_obs_dict(terminal.obs)["health"] == 0.0
        assert round(float(env.get_obs_dict(decision.obs)["position"][0])) == 10
        # a new configuration continues the count: the next id after the current one
        env.reset(str(write_arena(tmp_path, THREE_ARENAS.replace("{random}", "false"), "b.yml")))
        assert _first_x(env) == 15
    finally:
        env.close()


def test_random_order_plays_every_arena_once_per_round(launcher, port, tmp_path):
    arena = write_arena(tmp_path, THREE_ARENAS.replace("{random}", "true"))
    env = _env(launcher, port, arena, useCamera=False, seed=11)
    try:
        seen = [_first_x(env)]
        for _ in range(5):
            env.reset()
            seen.append(_first_x(env))
        # every round plays each arena once; the last of a round counts in the next one too,
        # so no arena repeats back to back (the 4.3 player's rule)
        assert sorted(seen[:3]) == [5, 10, 15]
        assert sorted(seen[2:5]) == [5, 10, 15]
        assert all(a != b for a, b in zip(seen, seen[1:], strict=False))
    finally:
        env.close()


RANDOM_AGENT = """
    !ArenaConfig
    arenas:
      0: !Arena
        timeLimit: 100
        items:
        - !Item
          name: GoodGoal
"""


def test_seed_fixes_the_worlds_a_player_builds(launcher, port, tmp_path):
    arena = write_arena(tmp_path, RANDOM_AGENT)

    def positions(seed):
        env = _env(launcher, port, arena, useCamera=False, seed=seed)
        try:
            found = [tuple(env.get_obs_dict(env.get_steps(BEHAVIOR)[0].obs)["position"])]
            env.reset()
            found.append(tuple(env.get_obs_dict(env.get_steps(BEHAVIOR)[0].obs)["position"]))
            return found
        finally:
            env.close()

    first, again, other = positions(7), positions(7), positions(8)
    assert first == again
    assert first[0] != first[1]  # a reset builds a new world from the same generator
    assert first != other


def test_arena_that_does_not_load_is_a_clear_error(launcher, port, tmp_path, capfd):
    arena = write_arena(tmp_path, """
        !ArenaConfig
        arenas:
          0: !Arena
            timeLimit: 100
            items:
            - !Item
              name: GoodGoall
        """)
    with pytest.raises(UnityEnvironmentException, match="return code 3"):
        _env(launcher, port, arena, timeout=10)
    err = capfd.readouterr().err
    assert "[llm-aai bridge] error:" in err
    assert f"{arena}:" in err and "GoodGoall" in err


def test_multi_agent_configuration_is_refused_with_a_message(launcher, port, tmp_path, capfd):
    arena = write_arena(tmp_path, """
        !ArenaConfig
        arenas:
          0: !Arena
            timeLimit: 100
            items:
            - !Item
              name: Agent
              positions: [!Vector3 {x: 5, y: 0, z: 5}]
            - !Item
              name: Agent
              positions: [!Vector3 {x: 15, y: 0, z: 5}]
        """)
    with pytest.raises(UnityEnvironmentException, match="return code 3"):
        _env(launcher, port, arena, timeout=10)
    assert "multi-agent arenas are not supported" in capfd.readouterr().err


def test_player_reports_itself_as_the_bridge(launcher, port, tmp_path, caplog):
    from mlagents_envs import logging_util

    logging_util.set_log_level(logging_util.INFO)
    try:
        env = _env(launcher, port, write_arena(tmp_path, GOAL_AHEAD), useCamera=False)
        env.close()
    finally:
        logging_util.set_log_level(logging_util.WARNING)
    assert "package version llm-aai-bridge-" in caplog.text


def test_launcher_path_without_extension_and_refused_folders(launcher, port, tmp_path):
    from llm_aai.bridge.launcher import LauncherError, install

    bare = str(launcher)[: -len(".x86_64")]
    assert not os.path.exists(bare)
    env = _env(bare, port, write_arena(tmp_path, GOAL_AHEAD), useCamera=False)
    env.close()
    with pytest.raises(LauncherError, match="x86"):
        install(tmp_path / "build.x86" / "env")
    with pytest.raises(LauncherError, match=r"contains \[, which .*file-name pattern"):
        install(tmp_path / "run[1]" / "env")
    from mlagents_envs.env_utils import validate_environment_path  # why: it globs the path

    assert validate_environment_path(str(tmp_path / "run[1]" / "env" / "AAI.x86_64")) is None


def test_animalais_own_search_finds_the_launcher_in_env(port, tmp_path, monkeypatch):
    from llm_aai.bridge.launcher import install

    install(tmp_path / "env")
    arena = write_arena(tmp_path, GOAL_AHEAD)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ANIMALAI_AUTO_DOWNLOAD", "0")
    env = AnimalAIEnvironment(base_port=port, arenas_configurations=str(arena), useCamera=False,
                              timeout=30)  # no file_name: animalai looks in ./env*/
    try:
        assert list(env.behavior_specs) == [BEHAVIOR]
    finally:
        env.close()
