"""What the oracle's search reaches on real testbed tasks the audit found it missing.

Each case was a Unity-passed task the search left unsolved (docs/testbed-audit.md) for a
reason of the search, not the simulator: a ball that must be waited for, a one-way drop
that makes the first target decide the score, a steep ramp the walking map ruled out.
"""

from __future__ import annotations

import numpy as np
import pytest

from llm_aai.arena import load_config
from llm_aai.arena.catalog import pass_mark_of, resolve_arena_path
from llm_aai.arena.placement import place_arena
from llm_aai.env.animalai_env import world_seed
from llm_aai.oracle import DEFAULT_BUDGET, SearchSettings, play_oracle_episode
from llm_aai.runner.suite import episode_seed


def play(testbed_dir, task: str, build: str = "3.x"):
    """The audit's episode of ``task`` with seed 1 (the same world and settings)."""
    path = str(resolve_arena_path(task, testbed_dir))
    arena = load_config(path).arena()
    placed = place_arena(arena, np.random.default_rng(world_seed(episode_seed(0, task, 1))),
                         source=path)
    mark = pass_mark_of(task, arena.pass_mark).value
    return play_oracle_episode(placed, SearchSettings(DEFAULT_BUDGET, False, 1, mark),
                               physics_build=build)


def test_it_waits_for_a_bouncing_ball_where_the_ball_will_pass(testbed_dir):
    """04-30-02: the green bounce ball crosses the safe corridor between two death zones
    before the first script; in the 2019 build it bounces off the far wall and crosses
    again, where the oracle now waits for it."""
    episode = play(testbed_dir, "04-30-02", "2019")
    assert episode.passed and episode.end_reason == "good_goal"
    assert "wait for it at" in episode.texts[0]


@pytest.mark.slow
def test_each_ball_is_tried_first_when_a_drop_is_one_way(testbed_dir):
    """09-28-01: dropping off the central wall into a quadrant is one-way; only the quadrant
    with five of the fourteen yellow balls reaches the pass mark 3.9."""
    episode = play(testbed_dir, "09-28-01")
    assert episode.passed and episode.reward >= 3.9


@pytest.mark.slow
def test_steep_short_ramps_are_walkable_on_the_map(testbed_dir):
    """06-20-02: each arm of the cross starts with a 1 m ramp 1 m long (45 degrees), which
    the agent climbs; the map now lets the search plan over it to all four balls."""
    episode = play(testbed_dir, "06-20-02")
    assert episode.passed and episode.end_reason == "all_multis"


@pytest.mark.parametrize("task", ["10-02-01", "10-04-01"])
def test_it_shoves_a_block_to_get_a_ball_out_of_a_death_zone(testbed_dir, task):
    """10-02-01: an 8 m box pushed along its length knocks the ball across the zone (the
    shove stops short of the zone the agent follows the box towards); 10-04-01: a U block
    turned to sweep the ball out."""
    episode = play(testbed_dir, task)
    assert episode.passed and episode.end_reason == "good_goal"
    assert "push it from" in episode.texts[0]
