"""Animal-AI's object types as data: sizes, rotation ranges, colours, masses and rewards.

One table serves the validator (is this name known? is this size legal?), the placer (size
clamps, rotation ranges, footprints) and the simulator (geometry, look, physics, rewards), so
the rules of the game live in one place. Values are those of the AAI 3.x/4.0 build that the
testbed and the paper used, and for the objects the testbed never uses (decoys, BadGoalMulti)
those of today's Animal-AI; each is sourced in docs/animal-ai-facts.md §3-§4.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Kind(StrEnum):
    """The families of objects, each built and ruled the same way by the simulator."""

    AGENT = "agent"
    WALL = "wall"
    RAMP = "ramp"
    TUNNEL = "tunnel"
    BOX = "box"  # pushable cube (Cardbox1/2)
    U_BLOCK = "u_block"  # pushable U/L/J shapes built from box pieces
    ZONE = "zone"
    GOAL = "goal"


class Quota(StrEnum):
    """Which count a multi goal's ``numberOfGoals`` is set to (docs/animal-ai-facts.md §3).

    A multi goal ends the episode when the agent's count of positive goals collected has
    reached its ``numberOfGoals``; Unity sets that number per family when it builds an arena.
    """

    GOOD_GOALS = "good_goals"  # the GoodGoal*/GoodGoalMulti* objects spawned
    BAD_MULTIS = "bad_multis"  # the BadGoalMulti objects spawned
    PREFAB = "prefab"  # never set: the prefab's numberOfGoals, 1 (DecoyGoalMulti)


@dataclass(frozen=True)
class ObjectSpec:
    """Everything AAI fixes about one object type.

    Attributes:
        name: the testbed's YAML name (the AAI 3.x spelling).
        kind: which family builds and rules it.
        size_min / size_max: per-axis clamp applied to YAML sizes; a negative axis is drawn
            uniformly in this range. Goals use only x (the ball's diameter).
        rotation_range: yaw range in degrees for a random (-1 or missing) rotation.
        color: default RGB in 0-1, used when the YAML colour is not honoured or not given.
        color_settable: AAI 3.x honours YAML colours only for walls, ramps and tunnels; an
            unspecified colour on such an object is drawn at random.
        alpha: opacity for the renderer (transparent walls and tunnels, zone fog).
        mass: kg for pushable bodies; None for objects that do not move under the agent.
        reward_sign: +1 for good goals, -1 for bad goals and the death zone, 0 otherwise
            (decoys: a ball that pays 0).
        ends_episode: touching it completes the arena (GoodGoal, BadGoal, DecoyGoal,
            DeathZone).
        multi: collected and removed; it ends the episode only once the agent's positive
            goals collected reach the count named by ``quota``.
        quota: for a multi goal, which count ends the episode (``Quota``).
        change: ``"value"`` for a goal whose reward moves from ``initialValues`` to
            ``finalValues`` (DecayGoal, RipenGoal), else None.
        final_color: the colour such a goal has once its value reached the final one.
        bounce: the ball starts with 10 m/s along its yaw.
        yaw_offset: extra yaw built into the Unity prefab (U/L shapes are rotated 90 degrees).
        aliases: names newer AAI builds use for the same object.
    """

    name: str
    kind: Kind
    size_min: tuple[float, float, float]
    size_max: tuple[float, float, float]
    rotation_range: tuple[float, float] = (0.0, 360.0)
    color: tuple[float, float, float] = (0.5, 0.5, 0.5)
    color_settable: bool = False
    alpha: float = 1.0
    mass: float | None = None
    reward_sign: int = 0
    ends_episode: bool = False
    multi: bool = False
    quota: Quota | None = None
    change: str | None = None
    final_color: tuple[float, float, float] | None = None
    bounce: bool = False
    yaw_offset: float = 0.0
    aliases: tuple[str, ...] = ()

    @property
    def is_good_goal(self) -> bool:
        """Counted in AAI's numberOfGoals (GoodGoal, GoodGoalMulti and their Bounce forms).

        A changing goal is not: Unity counts goals by their tag when it spawns them, before
        a DecayGoal retags itself (docs/animal-ai-facts.md §4).
        """
        return (self.kind is Kind.GOAL and self.reward_sign > 0
                and self.quota in (None, Quota.GOOD_GOALS))


_WALL_SIZES = ((0.1, 0.1, 0.1), (40.0, 10.0, 40.0))
_ZONE_SIZES = ((1.0, 0.5, 1.0), (40.0, 10.0, 40.0))
_BOX_SIZES = ((0.5, 0.5, 0.5), (10.0, 10.0, 10.0))
_U_SIZES = ((1.0, 0.3, 3.0), (5.0, 2.0, 20.0))
_BALL_SIZES = ((0.5, 0.5, 0.5), (5.0, 5.0, 5.0))
_TUNNEL_SIZES = ((2.5, 2.5, 2.5), (10.0, 10.0, 10.0))

_GREEN = (0.506, 0.749, 0.255)
_YELLOW = (0.910, 0.725, 0.137)
_RED = (0.81, 0.35, 0.35)
_DECOY_GREY = (0.698, 0.698, 0.698)
_ORANGE_RED = (1.0, 0.177, 0.0)
_DECAY_YELLOW = (0.913, 0.723, 0.138)
_DECAY_GREY = (0.392, 0.392, 0.392)
_RIPEN_GREY = (0.392, 0.392, 0.392)
_BOX_GREY = (0.70, 0.72, 0.73)
_PLANK = (0.85, 0.84, 0.80)
_TRANSPARENT_ALPHA = 0.42


def _ball(name: str, color, sign: int, *, quota: Quota | None = None, bounce=False,
          aliases=()) -> ObjectSpec:
    multi = quota is not None
    return ObjectSpec(
        name, Kind.GOAL, *_BALL_SIZES, rotation_range=(0.0, 360.0) if bounce else (0.0, 0.0),
        color=color, mass=1.0, reward_sign=sign, ends_episode=not multi, multi=multi,
        quota=quota, bounce=bounce, aliases=aliases,
    )


def _changing(name: str, color, final_color, *, aliases=()) -> ObjectSpec:
    """A DecayGoal-script ball: diameter from its initial value (0-5), multi, quota 1."""
    return ObjectSpec(
        name, Kind.GOAL, (0.0, 0.0, 0.0), (5.0, 5.0, 5.0), rotation_range=(0.0, 0.0),
        color=color, mass=1.0, reward_sign=+1, multi=True, quota=Quota.PREFAB, change="value",
        final_color=final_color, aliases=aliases,
    )


OBJECTS: dict[str, ObjectSpec] = {
    spec.name: spec
    for spec in (
        ObjectSpec("Agent", Kind.AGENT, (1.0, 1.0, 1.0), (1.0, 1.0, 1.0), mass=100.0),
        ObjectSpec("Wall", Kind.WALL, *_WALL_SIZES, color_settable=True),
        ObjectSpec("WallTransparent", Kind.WALL, *_WALL_SIZES, color=(1.0, 1.0, 1.0),
                   alpha=_TRANSPARENT_ALPHA),
        ObjectSpec("Ramp", Kind.RAMP, (0.5, 0.1, 0.5), (40.0, 10.0, 40.0), color_settable=True),
        ObjectSpec("CylinderTunnel", Kind.TUNNEL, *_TUNNEL_SIZES, color_settable=True),
        ObjectSpec("CylinderTunnelTransparent", Kind.TUNNEL, *_TUNNEL_SIZES,
                   color=(1.0, 1.0, 1.0), alpha=_TRANSPARENT_ALPHA),
        ObjectSpec("Cardbox1", Kind.BOX, *_BOX_SIZES, color=_BOX_GREY, mass=1.0,
                   aliases=("LightBlock",)),
        ObjectSpec("Cardbox2", Kind.BOX, *_BOX_SIZES, color=_BOX_GREY, mass=2.0,
                   aliases=("HeavyBlock",)),
        ObjectSpec("UObject", Kind.U_BLOCK, *_U_SIZES, color=_PLANK, mass=1.5, yaw_offset=90.0,
                   aliases=("UBlock",)),
        ObjectSpec("LObject", Kind.U_BLOCK, *_U_SIZES, color=_PLANK, mass=1.5, yaw_offset=90.0,
                   aliases=("LBlock",)),
        ObjectSpec("LObject2", Kind.U_BLOCK, *_U_SIZES, color=_PLANK, mass=1.5, yaw_offset=90.0,
                   aliases=("JBlock",)),
        ObjectSpec("DeathZone", Kind.ZONE, *_ZONE_SIZES, color=(0.52, 0.26, 0.22), alpha=0.88,
                   reward_sign=-1, ends_episode=True),
        ObjectSpec("HotZone", Kind.ZONE, *_ZONE_SIZES, color=(0.95, 0.55, 0.20), alpha=0.69),
        _ball("GoodGoal", _GREEN, +1),
        _ball("GoodGoalBounce", _GREEN, +1, bounce=True),
        _ball("GoodGoalMulti", _YELLOW, +1, quota=Quota.GOOD_GOALS),
        _ball("GoodGoalMultiBounce", _YELLOW, +1, quota=Quota.GOOD_GOALS, bounce=True),
        _ball("BadGoal", _RED, -1),
        _ball("BadGoalBounce", _RED, -1, bounce=True),
        # Animal-AI 4.x's goals (docs/animal-ai-facts.md §4, "Newer goals")
        _ball("BadGoalMulti", _ORANGE_RED, -1, quota=Quota.BAD_MULTIS),
        _ball("DecoyGoal", _DECOY_GREY, 0),
        _ball("DecoyGoalBounce", _DECOY_GREY, 0, bounce=True),
        _ball("DecoyGoalMulti", _DECOY_GREY, 0, quota=Quota.PREFAB),
        _changing("DecayGoal", _DECAY_YELLOW, _DECAY_GREY),
        _changing("RipenGoal", _RIPEN_GREY, _DECAY_YELLOW, aliases=("AntiDecayGoal",)),
    )
}

_BY_ALIAS = {alias: spec for spec in OBJECTS.values() for alias in spec.aliases}


def lookup(name: str) -> ObjectSpec:
    """Return the spec for a YAML object name or one of its newer aliases.

    Raises:
        KeyError: the name is not an object this project simulates; the message lists them.
    """
    spec = OBJECTS.get(name) or _BY_ALIAS.get(name)
    if spec is None:
        raise KeyError(f"unknown object {name!r}; known objects: {', '.join(sorted(OBJECTS))}")
    return spec
