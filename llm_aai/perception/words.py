"""What the prompt calls each object, and numbers rounded as a person would say them.

The words are those of the background prompt (``llm_aai/prompts/react_system.md``): green,
yellow and red balls, the red death zone and the orange hot zone, walls, transparent walls,
ramps, tunnels, pushable boxes. Colour is named only where it tells objects apart (walls,
ramps, tunnels are drawn in any colour; a ball's or a zone's colour is its name).
"""

from __future__ import annotations

from llm_aai.arena.objects import Kind, ObjectSpec

_BALLS = {
    "GoodGoal": "green ball",
    "GoodGoalBounce": "green ball",
    "GoodGoalMulti": "yellow ball",
    "GoodGoalMultiBounce": "yellow ball",
    "BadGoal": "red ball",
    "BadGoalBounce": "red ball",
    "BadGoalMulti": "orange ball",
    "DecoyGoal": "grey ball",
    "DecoyGoalBounce": "grey ball",
    "DecoyGoalMulti": "grey ball",
    "DecayGoal": "decaying ball",
    "RipenGoal": "ripening ball",
}
_ZONES = {"DeathZone": "red death zone", "HotZone": "orange hot zone"}
_BLOCKS = {"UObject": "pushable U-shaped block", "LObject": "pushable L-shaped block",
           "LObject2": "pushable J-shaped block"}

_PALETTE = {
    "black": (0.0, 0.0, 0.0),
    "grey": (0.5, 0.5, 0.5),
    "white": (1.0, 1.0, 1.0),
    "red": (0.85, 0.15, 0.15),
    "orange": (1.0, 0.55, 0.1),
    "yellow": (0.95, 0.9, 0.15),
    "green": (0.2, 0.7, 0.2),
    "blue": (0.15, 0.3, 0.9),
    "light blue": (0.5, 0.75, 1.0),
    "purple": (0.55, 0.25, 0.7),
    "pink": (1.0, 0.5, 0.75),
    "brown": (0.5, 0.3, 0.15),
}


def ball_or_zone_word(name: str) -> str | None:
    """The prompt's word for a ball or zone by its YAML name (``GoodGoal`` -> ``green ball``)."""
    return _BALLS.get(name) or _ZONES.get(name)


def colour_name(rgb: tuple[float, float, float]) -> str:
    """The palette colour nearest to ``rgb`` (0-1 floats), a word a person would use."""
    return min(_PALETTE, key=lambda name: sum((a - b) ** 2 for a, b in zip(_PALETTE[name], rgb,
                                                                           strict=True)))


def object_noun(spec: ObjectSpec, rgb: tuple[float, float, float]) -> str:
    """The prompt's words for an object, with its colour where the colour is not its name."""
    if spec.name in _BALLS:
        moving = " (moving)" if spec.bounce else ""
        return _BALLS[spec.name] + moving
    if spec.name in _ZONES:
        return _ZONES[spec.name]
    if spec.name in _BLOCKS:
        return _BLOCKS[spec.name]
    transparent = spec.alpha < 1
    if spec.kind is Kind.WALL:
        return "transparent wall" if transparent else f"{colour_name(rgb)} wall"
    if spec.kind is Kind.TUNNEL:
        return "transparent tunnel" if transparent else f"{colour_name(rgb)} tunnel"
    if spec.kind is Kind.RAMP:
        return f"{colour_name(rgb)} ramp"
    if spec.kind is Kind.BOX:
        return "pushable box"
    raise ValueError(f"no words for object {spec.name!r} of kind {spec.kind}")


def metres(value: float) -> str:
    """A length as said aloud: tenths below 3 m, halves below 10 m, whole metres above."""
    value = abs(value)
    if value < 3:
        text = f"{round(value, 1):.1f}"
    elif value < 10:
        text = f"{round(value * 2) / 2:.1f}"
    else:
        text = f"{round(value):d}"
    return text.removesuffix(".0")


def degrees_side(bearing: float) -> str:
    """A bearing (positive right) as "12° right", "5° left" or "straight ahead"."""
    whole = round(bearing)
    if whole == 0:
        return "straight ahead"
    return f"{abs(whole)}° {'right' if whole > 0 else 'left'}"


def heading(yaw: float) -> str:
    """A Unity yaw as whole degrees in [0, 360)."""
    return f"{round(yaw) % 360}°"
