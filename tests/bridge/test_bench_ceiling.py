"""The bridge benchmark's ceiling player: the real animalai client, a player without its world.

What ``benchmarks.bench_rl`` reports as the bridge's ceiling is only meaningful if that player
stops playing after its first step (else it measures the world too) and still serves
animalai a well-formed step each time (else animalai fails or resets).
"""

from __future__ import annotations

import numpy as np
from mlagents_envs.base_env import ActionTuple

from benchmarks import bridge_ceiling
from benchmarks.bench_rl import BridgeRounds
from tests.helpers.arenas import GOAL_AHEAD, write_arena

FORWARD_AND_RIGHT = np.array([[1, 1]], dtype=np.int32)


def _frames(rounds: BridgeRounds, steps: int) -> list[np.ndarray]:
    frames = []
    for _ in range(steps):
        rounds.env.set_actions(rounds.behavior, ActionTuple(discrete=FORWARD_AND_RIGHT))
        rounds.env.step()
        decisions, terminals = rounds.env.get_steps(rounds.behavior)
        assert len(terminals) == 0 and len(decisions) == 1
        frames.append(decisions.obs[0][0].copy())
    return frames


def test_the_ceiling_player_repeats_its_first_step_where_the_bridge_moves_on(tmp_path):
    arena = write_arena(tmp_path, GOAL_AHEAD)
    bridge = BridgeRounds(arena, 32)
    try:
        moving = _frames(bridge, 4)
    finally:
        bridge.close()
    ceiling = BridgeRounds(arena, 32, install=bridge_ceiling.install)
    try:
        repeated = _frames(ceiling, 4)
        assert ceiling.rate(50) > 0
    finally:
        ceiling.close()
    assert not np.array_equal(moving[1], moving[3])
    assert np.array_equal(moving[0], repeated[0])  # its first step is the bridge's own
    assert all(np.array_equal(repeated[0], frame) for frame in repeated[1:])
