"""Judge a claim against what the simulator knew: ``true``, ``false`` or ``unverifiable``.

Rules, each a fact of the re-simulated state (``TurnTruth``):

- ``seen``: true if a matching object (type, and colour when said; a block-shaped ``Wall``
  item answers to box and to wall, ``scene.block_shaped``) is visible: reached by the
  eye's rays, as in the text observation, glass seen through and brick walls not. An object
  hidden behind an opaque wall is not visible, so "I see the green ball" is then false. A
  belief with no place ("the green ball is probably beyond the wall") cannot be checked when
  the object is out of sight: unverifiable.
- ``not_seen``: true if no matching object is visible. One that says where ("no green ball on
  my right") is about that side only: true if no visible matching object lies there; said of
  the object's place rather than of the view ("the yellow ball is not behind me", ``sees``
  false), every matching object counts, seen or not.
- ``bearing`` and ``distance``: a claim said to be seen is checked against the visible matching
  objects only (none visible: false); a belief that says where ("it must be behind me") is
  checked against every matching object, seen or not. Bearings allow ``BEARING_SLACK_DEG``
  beyond the object's seen edges; distances ``DISTANCE_SLACK_M`` or ``DISTANCE_SLACK`` of the
  truth, whichever is larger.
- ``health_trend``: the health told in this message against the one told in the message before.
- ``health_comparison``: the direction said against the two values said (84.2 to 35.4 is a fall,
  whatever the text calls it).
- ``reward``: collection events of the turn just played (between the two messages).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from llm_aai.grounding.claims import Claim
from llm_aai.grounding.scene import Scene, SceneObject

BEARING_SLACK_DEG = 10.0
DISTANCE_SLACK_M = 1.0
DISTANCE_SLACK = 0.3
AHEAD_DEG = 15.0
"""An object's centre within this of straight ahead (or its seen part across it) is "ahead"."""
SIDE_DEG = 5.0
"""An object is "left" (right) if its centre or some seen part is this far to that side."""
BEHIND_DEG = 90.0

_BALL_EVENTS = {"GoodGoalMulti": "yellow", "GoodGoal": "green", "BadGoalMulti": "orange",
                "BadGoal": "red", "DecoyGoal": "grey"}
"""Event kinds by prefix (longest first, so ``GoodGoalMultiBounce`` is yellow and
``BadGoalMulti`` orange), the colours ``llm_aai.perception.words`` names the balls by."""


@dataclass(frozen=True)
class TurnTruth:
    """What the simulator knew when one Think was written.

    Attributes:
        scene: every object at the instant of the turn's observation (None: not re-simulated).
        health_now: the health the turn's message told.
        health_before: the health the message before told (None on the first turn).
        events: reward events (``{"kind", "reward", "step"}``) of the turn just played.
    """

    scene: Scene | None
    health_now: float | None = None
    health_before: float | None = None
    events: Sequence[Mapping[str, Any]] = field(default_factory=tuple)


@dataclass(frozen=True)
class Verdict:
    """A claim's verdict and the truth it rests on, in words."""

    verdict: str
    truth: str


def verify(claim: Claim, truth: TurnTruth) -> Verdict:
    """Judge ``claim`` against ``truth``."""
    judge = _JUDGES[claim.kind]
    return judge(claim, truth)


def _matching(claim: Claim, objects: Sequence[SceneObject]) -> list[SceneObject]:
    return [o for o in objects if _matches(claim, o)]


def _matches(claim: Claim, obj: SceneObject) -> bool:
    if claim.type is not None and claim.type not in (obj.type, *obj.also):
        return False
    colour = claim.colour
    if colour is None:
        return True
    if colour == "food":
        return obj.type == "ball" and obj.colour in ("green", "yellow")
    return colour == obj.colour or colour in obj.colour.split()


def _nearest_first(objects: Sequence[SceneObject]) -> list[SceneObject]:
    return sorted(objects, key=lambda o: o.distance)


def _listing(objects: Sequence[SceneObject], none: str) -> str:
    if not objects:
        return none
    return "; ".join(o.describe() for o in _nearest_first(objects)[:3])



def _seen(claim: Claim, truth: TurnTruth) -> Verdict:
    scene = truth.scene
    if scene is None:
        return Verdict("unverifiable", "the turn was not re-simulated")
    visible = _matching(claim, scene.visible)
    everywhere = _matching(claim, scene.objects)
    dark = " (dark: nothing is seen)" if scene.dark else ""
    if visible:
        return Verdict("true", _listing(visible, ""))
    text = _listing(everywhere, f"no {claim.subject} in the arena") + dark
    if not claim.sees and everywhere:
        return Verdict("unverifiable", text)
    return Verdict("false", text)


def _not_seen(claim: Claim, truth: TurnTruth) -> Verdict:
    scene = truth.scene
    if scene is None:
        return Verdict("unverifiable", "the turn was not re-simulated")
    placed = claim.side is not None or claim.degrees is not None
    pool = scene.objects if placed and not claim.sees else scene.visible
    there = [o for o in _matching(claim, pool) if not placed or _bearing_holds(claim, o)]
    if there:
        return Verdict("false", _listing(there, ""))
    everywhere = _matching(claim, scene.objects)
    dark = " (dark: nothing is seen)" if scene.dark else ""
    where = f" (none {_place(claim)})" if placed and everywhere else ""
    return Verdict("true", _listing(everywhere, f"no {claim.subject} in the arena") + where
                   + dark)


def _place(claim: Claim) -> str:
    """A claim's bearing as a phrase: ``on the left``, ``ahead``, ``at -30 deg``."""
    if claim.degrees is not None:
        return f"at {claim.degrees:+.0f} deg"
    return claim.side if claim.side in ("ahead", "behind") else f"on the {claim.side}"


def _candidates(claim: Claim, scene: Scene) -> tuple[list[SceneObject], list[SceneObject]]:
    """Objects the claim may be about, and all matching ones (for the truth text)."""
    everywhere = _matching(claim, scene.objects)
    return (_matching(claim, scene.visible) if claim.sees else everywhere), everywhere


def _bearing(claim: Claim, truth: TurnTruth) -> Verdict:
    return _placed(claim, truth, _bearing_holds)


def _distance(claim: Claim, truth: TurnTruth) -> Verdict:
    return _placed(claim, truth, _distance_holds)


def _placed(claim: Claim, truth: TurnTruth, holds) -> Verdict:
    scene = truth.scene
    if scene is None:
        return Verdict("unverifiable", "the turn was not re-simulated")
    candidates, everywhere = _candidates(claim, scene)
    right = [o for o in candidates if holds(claim, o)]
    if right:
        return Verdict("true", _listing(right, ""))
    return Verdict("false", _listing(candidates or everywhere,
                                     f"no {claim.subject} in the arena"))


def _bearing_holds(claim: Claim, obj: SceneObject) -> bool:
    if claim.degrees is not None:
        return (obj.leftmost - BEARING_SLACK_DEG <= claim.degrees
                <= obj.rightmost + BEARING_SLACK_DEG)
    if claim.side == "ahead":
        return abs(obj.bearing) <= AHEAD_DEG or obj.leftmost <= 0.0 <= obj.rightmost
    if claim.side == "left":
        return obj.bearing < 0.0 or obj.leftmost < -SIDE_DEG
    if claim.side == "right":
        return obj.bearing > 0.0 or obj.rightmost > SIDE_DEG
    return abs(obj.bearing) >= BEHIND_DEG


def _distance_holds(claim: Claim, obj: SceneObject) -> bool:
    slack = max(DISTANCE_SLACK_M, DISTANCE_SLACK * obj.distance)
    return abs(claim.metres - obj.distance) <= slack


def _health_trend(claim: Claim, truth: TurnTruth) -> Verdict:
    now, before = truth.health_now, truth.health_before
    if now is None or before is None:
        return Verdict("unverifiable", "no earlier health was told"
                       if now is not None else "no health was told")
    change = "rose" if now > before else "fell" if now < before else "stayed"
    text = f"health {change} from {before:g} to {now:g}"
    if now == before:
        return Verdict("false", text)
    return Verdict("true" if (now > before) == claim.rising else "false", text)


def _health_comparison(claim: Claim, truth: TurnTruth) -> Verdict:
    first, second = claim.values
    if first == second:
        return Verdict("false", f"{first:g} and {second:g} are equal")
    change = "a rise" if second > first else "a fall"
    told = f"; health told {truth.health_now:g}" if truth.health_now is not None else ""
    text = f"{first:g} to {second:g} is {change}{told}"
    return Verdict("true" if (second > first) == claim.rising else "false", text)


def _ball_colour(kind: str) -> str | None:
    for prefix, colour in _BALL_EVENTS.items():
        if kind.startswith(prefix):
            return colour
    return None


def _reward(claim: Claim, truth: TurnTruth) -> Verdict:
    collected = [(e, _ball_colour(str(e.get("kind", "")))) for e in truth.events]
    collected = [(e, c) for e, c in collected if c is not None]
    wanted = claim.colour
    if wanted in (None, "food"):
        hits = [e for e, c in collected if c in ("green", "yellow")]
    else:
        hits = [e for e, c in collected if c == wanted]
    text = ("; ".join(f"{c} ball collected at step {e.get('step')} ({float(e.get('reward', 0)):+g})"
                      for e, c in collected) or "no ball collected in the turn before")
    return Verdict("true" if bool(hits) == claim.rising else "false", text)


_JUDGES = {
    "seen": _seen,
    "not_seen": _not_seen,
    "bearing": _bearing,
    "distance": _distance,
    "health_trend": _health_trend,
    "health_comparison": _health_comparison,
    "reward": _reward,
}
