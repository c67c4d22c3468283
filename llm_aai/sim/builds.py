"""What differs between the Animal-AI builds the simulator follows, besides bounce.

Two builds matter (``llm_aai.sim.simulator.PHYSICS_BUILDS``): 3.x/4.x, the one the LLM-AAI
paper used (3.1.3), and the 2019 build the Animal-AI Olympics entrants played. Both are read
from their Unity sources (docs/animal-ai-facts.md §3, "Per build"):

- Zone triggers. 3.x/4.x scale a zone's box to its YAML height, clamped to at least 0.5 and
  x 0.999, centred at y = -0.15, so a zone's trigger reaches 0.09975 m above y = 0 (the floor's
  top is at -0.01). The 2019 build ignores the YAML height: a death zone is 1.001 m tall and a
  hot zone 1 m, both centred at y = -0.5, so the trigger ends at the floor's level (+0.0005 and
  0.0). A bridge 0.1 m thick over a death zone (testbed 04-22) lets the agent cross in the
  2019 build; in 3.x/4.x the agent on it sinks about a centimetre into the trigger and dies.
- Health. 3.x/4.x keep a health that ends the episode at 0; the 2019 agent has no health: an
  episode ends only at a goal, a death zone or the time limit, so a hot zone never ends one.
- Clock. 3.x/4.x count ``t`` and blackouts in units of 5 physics steps (the "x5" quirk); the
  2019 build in units of its decision interval, 3 (``maxStep = t x 3``), so its episodes are
  3t physics steps long and lose 1/(3t) per physics step; its hot zones cost at least
  0.00001 per physics step (3.x: 0.001).
The placer (``llm_aai.arena.placement``) follows 3.x/4.x; ``zone_trigger`` turns its zone box
into the 2019 one.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from llm_aai.arena.geometry import Box
from llm_aai.sim.rules import HOT_FLOOR, PHYSICS_STEPS_PER_ACTION, PHYSICS_STEPS_PER_UNIT

PHYSICS_BUILDS = ("3.x", "2019")
"""Animal-AI builds whose physics differ in a way the simulator models: ``"3.x"`` (3.x/4.x,
the build the LLM-AAI paper used: Animal-AI 3.1.3; the default) and ``"2019"`` (the Olympics
build: bounce balls with bounciness 0.8, ``llm_aai.sim.bounce``; zones and health as above)."""
ZONE_2019_CENTER_Y = -0.5
"""The 2019 build's zones are centred here whatever the YAML says (``DeathZone.cs``)."""
ZONE_2019_HEIGHT = {"DeathZone": 1.001, "HotZone": 1.0}
"""Height of the 2019 build's zone boxes (their ``SetSize``: fixed, not the YAML's y)."""


def zone_trigger(box: Box, name: str, physics_build: str) -> Box:
    """The trigger box of a placed zone in ``physics_build``.

    Args:
        box: the zone's box as the 3.x/4.x placer made it (its x/z sizes and yaw are the same
            in both builds: clamped to [1, 40] and x 0.999).
        name: ``DeathZone`` or ``HotZone``.
        physics_build: ``"3.x"`` or ``"2019"``.

    Raises:
        ValueError: an unknown build or zone name.
    """
    if physics_build == "3.x":
        return box
    if physics_build != "2019":
        raise ValueError(f"no zone geometry known for build {physics_build!r}")
    if name not in ZONE_2019_HEIGHT:
        raise ValueError(f"{name!r} is not a zone; zones are {', '.join(ZONE_2019_HEIGHT)}")
    x, _, z = box.center
    half_x, _, half_z = box.half
    return dataclasses.replace(box, center=(x, ZONE_2019_CENTER_Y, z),
                               half=(half_x, ZONE_2019_HEIGHT[name] / 2, half_z))


@dataclass(frozen=True)
class GameClock:
    """A build's rules of time and health, as ``llm_aai.sim.rules.Rules`` takes them.

    Attributes:
        steps_per_unit: physics steps in one unit of ``t`` and of blackout values.
        health_ends: whether health at 0 ends the episode.
        hot_floor: a hot zone costs at least this reward per physics step.
    """

    steps_per_unit: int
    health_ends: bool
    hot_floor: float


_CLOCKS = {
    "3.x": GameClock(steps_per_unit=PHYSICS_STEPS_PER_UNIT, health_ends=True,
                     hot_floor=HOT_FLOOR),
    "2019": GameClock(steps_per_unit=3, health_ends=False, hot_floor=-0.00001),
}


def game_clock(physics_build: str) -> GameClock:
    """The rules of time and health of ``physics_build``.

    Raises:
        ValueError: an unknown build.
    """
    if physics_build not in _CLOCKS:
        raise ValueError(f"no rules of time and health known for build {physics_build!r}")
    return _CLOCKS[physics_build]


def time_limit_steps(t: float, steps_per_unit: int = PHYSICS_STEPS_PER_UNIT) -> int | None:
    """Agent steps before an arena with time limit ``t`` ends (None: no limit).

    ``t`` is in the build's own unit of physics steps (``GameClock.steps_per_unit``): 5 in
    3.x/4.x, so t = 250 lasts 417 agent steps of 3 physics steps; 3 in the 2019 build, whose
    episodes are shorter (250). Everything shown to people counts agent steps, via this.
    """
    if not t:
        return None
    return math.ceil(steps_per_unit * t / PHYSICS_STEPS_PER_ACTION)
