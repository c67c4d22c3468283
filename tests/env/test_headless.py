"""``HeadlessEnv``: the protocol's episode on the bare simulator, nothing drawn."""

from __future__ import annotations

import numpy as np
import pytest

from llm_aai.arena import load_config
from llm_aai.arena.placement import place_arena
from llm_aai.env.headless import HeadlessEnv
from llm_aai.protocol import PAPER_PROTOCOL, Episode
from llm_aai.sim import Simulator
from tests.helpers.arenas import arena, obj


def _ball_ahead():
    return arena(obj("GoodGoal", (20.0, 0.0, 30.0), (1, 1, 1)), agent=(20.0, 0.0, 10.0),
                 yaw=0.0, t=250)


def test_a_placed_arena_is_loaded_as_given_and_nothing_is_drawn():
    placed = _ball_ahead()
    env = HeadlessEnv(placed)
    try:
        observation, info = env.reset(seed=3)
        assert observation["image"] is None and observation["health"] == 100.0 and info == {}
        x, _, z = env.simulator.state.position
        assert (round(x, 2), round(z, 2)) == (20.0, 10.0)
        with pytest.raises(RuntimeError):  # no renderer was ever made
            env.simulator.observe()
    finally:
        env.close()


def test_an_arena_is_placed_with_the_reset_seed_as_the_embedded_backend_does(testbed_dir):
    config = load_config(testbed_dir / "04-08-01.yaml").arena()
    env = HeadlessEnv(config)
    reference = Simulator(render=False)
    try:
        for seed in (1, 2):
            env.reset(seed=seed)
            rng = np.random.default_rng(seed)
            reference.load(place_arena(config, rng), rng)
            assert env.simulator.state.position == reference.state.position
            assert env.simulator.objects == reference.objects
    finally:
        env.close()
        reference.close()


def test_the_protocol_plays_on_it_start_script_and_run_out():
    env = HeadlessEnv(_ball_ahead())
    try:
        episode = Episode(env, PAPER_PROTOCOL)
        start = episode.start(seed=0)
        noops = PAPER_PROTOCOL.steps_after_reset + (
            PAPER_PROTOCOL.initial_observations * PAPER_PROTOCOL.noops_after_initial_observation)
        assert len(start.observations) == 3 and episode.totals.steps == noops
        turn = episode.play("Turn(12);Go(3);")
        assert turn.outcome.steps == 5 and not episode.totals.over
        assert turn.observations[-1]["image"] is None
        end = episode.run_out()  # time limit 250: the clock runs out
        assert episode.totals.over and end.steps > 0
        assert episode.totals.end_reason == env.simulator.end_reason == "time_limit"
        assert episode.totals.steps == env.simulator.state.steps
    finally:
        env.close()


def test_frames_are_drawn_where_the_protocol_looks_when_asked():
    env = HeadlessEnv(_ball_ahead(), render=True, resolution=64)
    try:
        episode = Episode(env, PAPER_PROTOCOL)
        start = episode.start(seed=0)
        assert all(o["image"].shape == (64, 64, 3) for o in start.observations)
        assert episode.play("Go(2);").observations[-1]["image"].shape == (64, 64, 3)
    finally:
        env.close()


def test_a_reset_without_a_world_says_so():
    env = HeadlessEnv()
    try:
        with pytest.raises(ValueError, match="no world to load"):
            env.reset(seed=0)
        observation, _ = env.reset(seed=0, options={"world": _ball_ahead()})
        assert observation["health"] == 100.0
    finally:
        env.close()
