"""Zones, health and the clock follow the Animal-AI build (docs/animal-ai-facts.md §3, "Per
build").

3.x/4.x: a zone's trigger is at least 0.5 m tall, centred at y = -0.15, so it reaches 0.09975 m;
health at 0 ends the episode; t counts units of 5 physics steps. 2019: zone triggers end at the
floor's level (centre -0.5, 1.001 m tall for a death zone, 1 m for a hot zone); no health, so
nothing but goals, death zones and the time limit ends an episode; t counts units of 3.
"""

import numpy as np
import pytest

from llm_aai.arena.geometry import Box
from llm_aai.sim import Simulator
from llm_aai.sim.builds import game_clock, zone_trigger
from llm_aai.sim.rules import Blackouts, Rules
from tests.helpers.arenas import arena, obj

PLACED_ZONE = Box(center=(20.0, -0.15, 20.0), half=(19.98, 0.24975, 9.99), yaw=30.0)
"""A 40 x 0 x 20 death zone as the placer puts it (height clamped to 0.5, x 0.999)."""


def _top(box: Box) -> float:
    return box.center[1] + box.half[1]


def test_the_3x_zone_trigger_is_the_placed_box():
    assert zone_trigger(PLACED_ZONE, "DeathZone", "3.x") == PLACED_ZONE
    assert _top(PLACED_ZONE) == pytest.approx(0.09975)


@pytest.mark.parametrize(("name", "top"), [("DeathZone", 0.0005), ("HotZone", 0.0)])
def test_the_2019_zone_trigger_ends_at_the_floor(name, top):
    box = zone_trigger(PLACED_ZONE, name, "2019")
    assert _top(box) == pytest.approx(top)
    assert box.center[1] - box.half[1] == pytest.approx(-1.0 - top)
    assert (box.center[0], box.center[2]) == (20.0, 20.0)
    assert (box.half[0], box.half[2], box.yaw) == (19.98, 9.99, 30.0)


def test_unknown_builds_and_zones_are_refused():
    with pytest.raises(ValueError, match="5.0"):
        zone_trigger(PLACED_ZONE, "DeathZone", "5.0")
    with pytest.raises(ValueError, match="Wall"):
        zone_trigger(PLACED_ZONE, "Wall", "2019")
    with pytest.raises(ValueError, match="5.0"):
        game_clock("5.0")


def test_the_2019_clock_counts_units_of_3_physics_steps():
    """2019: maxStep = t x 3 (the decision interval), -1/maxStep per physics step, blackouts at
    value x 3; 3.x: units of 5."""
    clock = game_clock("2019")
    rules = Rules(100, good_goals=1, health_ends=clock.health_ends,
                  steps_per_unit=clock.steps_per_unit, hot_floor=clock.hot_floor)
    assert rules.decay == pytest.approx(-1 / 300)
    for _ in range(299):
        rules.tick(in_hot_zone=False)
    assert not rules.done
    rules.tick(in_hot_zone=False)
    assert rules.end_reason == "time_limit" and rules.total_reward == pytest.approx(-1.0)
    assert Rules(0, 1, hot_floor=clock.hot_floor).hot == pytest.approx(-0.00001)
    assert Blackouts([10], steps_per_unit=clock.steps_per_unit).dark(30)
    assert not Blackouts([10], steps_per_unit=clock.steps_per_unit).dark(29)
    assert game_clock("3.x").steps_per_unit == 5 and game_clock("3.x").health_ends


def test_without_health_a_hot_zone_never_ends_the_episode():
    """t = 10: 50 physics steps; inside a hot zone health would be gone after 5."""
    rules = Rules(10, good_goals=1, health_ends=False)
    for _ in range(49):
        rules.tick(in_hot_zone=True)
    assert not rules.done and rules.health == 0.0
    assert rules.total_reward == pytest.approx(-49 * (0.02 + 0.2))
    rules.tick(in_hot_zone=True)
    assert rules.end_reason == "time_limit"
    ended = Rules(10, good_goals=1)
    for _ in range(5):
        ended.tick(in_hot_zone=True)
    assert ended.end_reason == "health_zero"


def _bridge_run(build: str, steps: int = 40) -> tuple[bool, str | None]:
    """The agent stands still on a 0.1 m wall laid across a death zone (testbed 04-22)."""
    placed = arena(obj("DeathZone", (20, 0, 20), (40 * 0.999, 0.5 * 0.999, 20 * 0.999)),
                   obj("Wall", (20, 0, 20), (10 * 0.999, 0.1 * 0.999, 22 * 0.999)),
                   agent=(20.0, 0.1, 20.0), t=250)
    sim = Simulator(render=False, physics_build=build)
    sim.load(placed, np.random.default_rng(0))
    for _ in range(steps):
        result = sim.step(0, 0)
        if result.done:
            return True, result.end_reason
    return False, None


def test_a_thin_bridge_over_a_death_zone_kills_in_3x_only():
    """The wall settles with its top about 0.09 m above y = 0, inside the 3.x trigger (0.09975)
    and above the 2019 one (0.0005)."""
    assert _bridge_run("3.x") == (True, "death_zone")
    assert _bridge_run("2019") == (False, None)


def test_a_hot_zone_drains_health_but_ends_nothing_in_2019():
    """t = 20, the agent in a hot zone from the start: in 3.x (100 physics steps) health is
    gone after 10 physics steps; in 2019 the episode runs to its time limit (60 physics
    steps)."""
    placed = arena(obj("HotZone", (20, 0, 20), (10, 0.5, 10)), agent=(20.0, 0.0, 20.0), t=20)
    ends = {}
    for build in ("3.x", "2019"):
        sim = Simulator(render=False, physics_build=build)
        sim.load(placed, np.random.default_rng(0))
        steps, result = 0, None
        while result is None or not result.done:
            result = sim.step(0, 0)
            steps += 1
        ends[build] = (result.end_reason, steps)
    assert ends["3.x"] == ("health_zero", 4)
    assert ends["2019"] == ("time_limit", 20)
