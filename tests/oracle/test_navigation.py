"""The oracle's walking map reads walls as walls now that they are bodies resting on the floor.

Walls are rigid bodies under gravity (docs/animal-ai-facts.md §4): they sink a millimetre or
two into the floor under MuJoCo's soft contact. The map's headroom test cast a ray back down
from inside a wall and met the floor before the wall's own underside, so every standing wall
read as an overhead plank with room under it, and the oracle drove into walls on tasks it had
solved before the walls became bodies (issue #22: 37 of 44 regressed tasks).
"""

from __future__ import annotations

import math

import numpy as np

from llm_aai.arena.placement import place_arena
from llm_aai.arena.yaml_io import load_config
from llm_aai.oracle import SearchSettings, play_oracle_episode
from llm_aai.oracle.navigation import CELL, NavMap, live_goals
from llm_aai.sim import Simulator
from tests.helpers.arenas import arena, obj


def _settled(placed, steps=20):
    sim = Simulator(render=False)
    sim.load(placed, np.random.default_rng(0))
    for _ in range(steps):  # walls land on the floor and sink into it a little
        sim.step(0, 0)
    return sim


def test_a_standing_wall_blocks_the_walking_map():
    sim = _settled(arena(obj("Wall", (20.0, 0.0, 20.0), (16, 3, 1)),
                         obj("GoodGoal", (20.0, 0.0, 30.0), (1, 1, 1)),
                         agent=(20.0, 0.0, 10.0)))
    wall_bottom = sim._data.geom_xpos[sim._model.geom("obj0").id][2] - 1.5
    assert wall_bottom < -0.01  # resting in the floor, whose top is at -0.01
    nav = NavMap(sim)
    i, j = NavMap.cell(20.0, 20.0)
    assert nav.height[i, j] > 2.9  # the wall's top, not the floor
    goal = live_goals(sim)[0][0]
    # the walk goes round the wall's end (8 m to the side), not straight through it
    walked = nav.distance(nav.field(goal), 20.0, 10.0)
    assert walked > 2 * math.hypot(8.0, 10.0) - 2 * CELL


def test_an_overhead_plank_leaves_room_under_it():
    # a plank 1.5 m up, held by two pillars: the floor under it stays walkable
    sim = _settled(arena(obj("Wall", (17.5, 0.0, 20.0), (1, 1.5, 1)),
                         obj("Wall", (22.5, 0.0, 20.0), (1, 1.5, 1)),
                         obj("Wall", (20.0, 1.5, 20.0), (6, 0.3, 1)),
                         obj("GoodGoal", (20.0, 0.0, 30.0), (1, 1, 1)),
                         agent=(20.0, 0.0, 10.0)))
    nav = NavMap(sim)
    i, j = NavMap.cell(20.0, 20.0)
    assert nav.height[i, j] < 0.1
    pillar = NavMap.cell(17.5, 20.0)
    assert nav.height[pillar] > 1.4


def test_the_oracle_solves_a_walled_maze_it_solved_before_walls_were_bodies(testbed_dir):
    """03-29-01: walls round the agent, the green ball out past their far end (2 entrants
    passed it in Unity). On main 4c41d0d the oracle drove into a wall for 30 scripts."""
    path = testbed_dir / "03-29-01.yaml"
    placed = place_arena(load_config(path).arena(), np.random.default_rng(0))
    episode = play_oracle_episode(placed, SearchSettings(budget=20_000, seed=1, pass_mark=0.0))
    assert episode.passed and episode.end_reason == "good_goal", episode
