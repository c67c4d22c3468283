"""The oracle's block pushes on the level-10 tasks where a block must sweep a ball out.

In 10-10-01 and its family the green balls lie just inside a death zone over the arena's
north half, inside the opening of a U block that straddles the zone's edge; the agent
starts on the 2 m central wall and can only drop off it. A ball comes out only when the
block is struck at an arm's tip so that it turns and its arm sweeps the ball south.
"""

from __future__ import annotations

import numpy as np
import pytest

from llm_aai.arena import load_config
from llm_aai.arena.catalog import resolve_arena_path
from llm_aai.arena.placement import place_arena
from llm_aai.env.animalai_env import world_seed
from llm_aai.oracle.navigation import NavMap, agent_pose
from llm_aai.oracle.tools import _sweep, pushes
from llm_aai.protocol import PAPER_PROTOCOL
from llm_aai.runner.suite import episode_seed
from llm_aai.sim import Simulator
from tests.oracle.test_search_reach import play


def first_script_state(testbed_dir, task: str) -> Simulator:
    """The audit's world of ``task`` (seed 1) where the oracle writes its first script."""
    path = str(resolve_arena_path(task, testbed_dir))
    placed = place_arena(load_config(path).arena(),
                         np.random.default_rng(world_seed(episode_seed(0, task, 1))), source=path)
    sim = Simulator(render=False)
    sim.load(placed, np.random.default_rng(1))
    protocol = PAPER_PROTOCOL
    for _ in range(protocol.steps_after_reset
                   + protocol.initial_observations * protocol.noops_after_initial_observation):
        sim.step(0, 0)
    return sim


def test_pushes_are_offered_after_a_one_way_drop_and_the_sweep_comes_first(testbed_dir):
    """The agent stands on a wall no floor cell climbs back to: pushes were once filtered by
    distances *to* the agent, so none was offered; the first now strikes the tip of the
    southern arm westward, the push that turns the block so its arm sweeps the ball south."""
    sim = first_script_state(testbed_dir, "10-10-01")
    x, _, z, _ = agent_pose(sim)
    assert x == pytest.approx(20.0, abs=0.1) and z == pytest.approx(1.0, abs=0.1)
    offered = pushes(sim, NavMap(sim))
    assert offered
    first = offered[0]
    px, _, pz = first.start.position
    assert first.heading == pytest.approx(270.0)
    assert 11.0 < px < 13.0 and 14.0 < pz < 15.0  # east of the arm's tip at x 10.75, z 14-15


def test_a_push_that_turns_an_arm_into_the_way_out_ranks_above_one_that_shoves_it_in():
    """A slab 4.5 m by 12 m (a U block's footprint), a ball in it near its north end and the
    way out to the south: striking the south-east tip westward turns the north end south;
    striking it northward drives the block, and the ball, further in."""
    low, high = (6.25, 14.0), (10.75, 26.0)
    ball = (10.0, 22.0)
    reach = np.zeros((80, 80), dtype=bool)
    reach[:, :40] = True  # z below 20 m is walkable ground
    westward = _sweep(low, high, (10.75, 14.8), (-1.0, 0.0), ball, reach)
    northward = _sweep(low, high, (10.45, 14.0), (0.0, 1.0), ball, reach)
    assert westward > 0.0
    assert northward == 0.0  # never reaches walkable ground that way


@pytest.mark.parametrize("task", ["10-10-01", "10-14-02", "10-06-03"])
def test_it_sweeps_a_ball_out_with_a_block(testbed_dir, task):
    """10-10-01 (western U block), 10-14-02 (eastern U block, struck eastward) and 10-06-03
    (a ball on a platform inside a U block hanging off it) pass in one script that pushes."""
    episode = play(testbed_dir, task)
    assert episode.passed and episode.end_reason == "good_goal"
    assert episode.scripts == 1
    assert "push it from" in episode.texts[0]


def test_the_same_seed_and_budget_give_the_same_push_scripts(testbed_dir):
    """The pushes (routes, creeping, stops) depend on the simulator's state only."""
    first, again = play(testbed_dir, "10-13-03"), play(testbed_dir, "10-13-03")
    assert first.texts == again.texts
    assert (first.reward, first.steps, first.searched) == (again.reward, again.steps,
                                                           again.searched)
