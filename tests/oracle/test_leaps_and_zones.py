"""The oracle's walking map and controller on the ways issue #22's audit found them missing.

Each case was a Unity-passed or children task the search left unsolved though a hand plan
passed it: a drop off a platform's end over the death zone at its foot (04-24-02), a hot strip
crossed along its length between two death strips (04-06-03), a run up a ramp that flies onto
a platform as high as the ramp (10-22-03, solved before the map saw standing walls as walls),
a ball on a pillar that comes down only when a block is driven into it (05-15-01; 10-21-01,
where the block must first come down from a platform).
"""

from __future__ import annotations

import math

import numpy as np

from llm_aai.oracle.knock import knocks
from llm_aai.oracle.leaps import _run_up
from llm_aai.oracle.navigation import NavMap, agent_pose, live_goals
from llm_aai.sim import Simulator
from tests.helpers.arenas import arena, obj
from tests.oracle.test_block_sweeps import first_script_state
from tests.oracle.test_search_reach import play


def _settled(placed, steps=20):
    sim = Simulator(render=False)
    sim.load(placed, np.random.default_rng(0))
    for _ in range(steps):
        sim.step(0, 0)
    return sim


def test_the_run_up_reaches_the_fact_sheets_speeds():
    # docs/animal-ai-facts.md (speed model): forward held from rest reaches 16.6 m/s after
    # 5.95 m (10 steps) and 20.5 m/s after 11.6 m (15 steps)
    flat = 0.5
    for metres, speed in ((5.95, 16.6), (11.6, 20.5)):
        cells = round(metres / flat + 0.5)
        reached, angle = _run_up((0.0,) * cells, flat)
        assert angle == 0.0
        assert abs(reached - speed) < 1.0


def _platform_over_a_zone(zone_depth: float):
    """A 0.5 m platform whose end stands at z 30 over a death zone from z 10 to 30 + depth
    (the death zone's strip then goes on past the platform's end by ``zone_depth``)."""
    return _settled(arena(
        obj("Wall", (10.0, 0.0, 20.0), (5, 0.5, 20)),
        obj("DeathZone", (20.0, 0.0, 20.0 + zone_depth / 2), (40, 0.5, 20 + zone_depth)),
        obj("GoodGoal", (10.0, 0.0, 37.0), (1, 1, 1)),
        agent=(10.0, 0.5, 12.0)))


def test_a_run_off_a_platforms_end_flies_over_the_zone_at_its_foot():
    sim = _platform_over_a_zone(0.0)
    nav = NavMap(sim)
    foot = NavMap.cell(10.0, 30.25)
    assert nav.blocked[foot]  # standing just past the end would touch the zone
    leaps = [leap for leap in nav.leaps if leap.launch == NavMap.cell(10.0, 29.75)]
    assert leaps and all(nav.centre(leap.land)[1] > 30.5 for leap in leaps)
    x, _, z, _ = agent_pose(sim)
    assert not math.isinf(nav.distance(nav.field(live_goals(sim)[0][0]), x, z))


def test_no_leap_lands_in_a_zone_that_goes_on_past_the_platform():
    # the zone runs 8 m past the platform's end: no run-up flies that far from 0.5 m up
    sim = _platform_over_a_zone(8.0)
    nav = NavMap(sim)
    assert not [leap for leap in nav.leaps if nav.centre(leap.launch)[1] > 29.0]
    x, _, z, _ = agent_pose(sim)
    assert math.isinf(nav.distance(nav.field(live_goals(sim)[0][0]), x, z))


def test_it_drops_off_the_platforms_end_past_the_death_zone(testbed_dir):
    """04-24-02: the only way to the ball runs along a 0.5 m platform across the death zone
    and off its end, where the zone ends."""
    episode = play(testbed_dir, "04-24-02")
    assert episode.passed and episode.end_reason == "good_goal"


def test_it_crosses_a_hot_strip_straight_after_turning_outside_it(testbed_dir):
    """04-06-03: hot strips alternate with death strips; the way to the ball runs 20 m along
    one. The controller stops before the strip, turns there, and crosses it straight
    (turning inside drained its health before)."""
    episode = play(testbed_dir, "04-06-03")
    assert episode.passed and episode.end_reason == "good_goal"


def test_a_hot_crossing_waypoint_lies_outside_the_zone_or_past_it(testbed_dir):
    sim = first_script_state(testbed_dir, "04-06-03")
    nav = NavMap(sim)
    field = nav.field(live_goals(sim)[0][0])
    x, _, z, _ = agent_pose(sim)
    seen = []
    for _ in range(40):  # follow the waypoints from the start as points, not as a walk
        point = nav.waypoint(field, x, z)
        assert point is not None
        seen.append(point)
        if point.z > 30.0:
            break
        x, z = point.x, point.z
    # the strip runs from z 10 to 30: no point to turn at between its ends
    inside = [p for p in seen if nav.hot[NavMap.cell(p.x, p.z)] and 10.5 < p.z < 29.5]
    assert not inside, "the hot strip is crossed in one straight run"
    assert any(p.stop for p in seen) and seen[-1].z > 30.0


def test_it_runs_up_the_ramp_and_flies_onto_the_platform(testbed_dir):
    """10-22-03 (children 32 %): the ball lies on a 1.5 m platform 7.5 m beyond the top of a
    1.5 m ramp; at full speed off the ramp's top the agent lands on it."""
    nav = NavMap(first_script_state(testbed_dir, "10-22-03"))
    assert any(nav.ramp[leap.launch] and nav.height[leap.land] > 1.4 for leap in nav.leaps)
    episode = play(testbed_dir, "10-22-03")
    assert episode.passed and episode.scripts == 1


def test_it_drives_the_box_into_the_ball_on_the_pillar(testbed_dir):
    """05-15-01 (children 37 %): the ball rests on a 2 m pillar; the 3 m box, pushed into
    it, knocks it down."""
    sim = first_script_state(testbed_dir, "05-15-01")
    assert knocks(sim, NavMap(sim))
    episode = play(testbed_dir, "05-15-01")
    assert episode.passed and episode.end_reason == "good_goal"
    assert "push it" in episode.texts[0]


def test_it_shoves_the_box_off_the_platform_then_into_the_ball(testbed_dir):
    """10-21-01 (children 14 %): the ball rests on a 1 m pillar out of reach; the aimed shove
    drives the 1.5 m box off its 1 m platform towards the pillar (a block nearer a ball out
    of reach scores as progress), and a second shove from the floor knocks the ball down."""
    episode = play(testbed_dir, "10-21-01")
    assert episode.passed and episode.end_reason == "good_goal"
    assert "push it" in episode.texts[0]
