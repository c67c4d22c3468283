"""A claim a Think makes about the world, in a form the simulator's state can check.

Both extractors (the rule-based one in ``extract.py`` and the LLM one in ``llm_extract.py``)
produce these; ``verify.py`` judges them, so the verdict never depends on who split the text.
"""

from __future__ import annotations

from dataclasses import dataclass

KINDS: tuple[str, ...] = ("seen", "not_seen", "bearing", "distance", "health_trend",
                          "health_comparison", "reward")
"""Every claim kind, in the order summaries list them.

``seen``/``not_seen``: an object (colour and type) is, or is not, in view (a ``not_seen`` may
be about one side only: ``no green ball on my right``). ``bearing``: where
it lies (ahead, left, right, behind, or degrees). ``distance``: how far it is. ``health_trend``:
health went up or down since the last message. ``health_comparison``: two health values
compared (up or down from one to the other). ``reward``: a ball was, or was not, collected.
"""
TYPES: tuple[str, ...] = ("ball", "wall", "ramp", "tunnel", "box", "zone")
VERDICTS: tuple[str, ...] = ("true", "false", "unverifiable")
SIDES: tuple[str, ...] = ("ahead", "left", "right", "behind")


@dataclass(frozen=True)
class Claim:
    """One checkable statement.

    Attributes:
        kind: one of ``KINDS``.
        span: the words of the Think that make the claim.
        type: the object's type (``TYPES``), for object and reward claims; None for "a ball
            or anything" in a reward claim.
        colour: the object's colour word as written (``green``, ``grey``, ``transparent``),
            ``food`` for a green or yellow ball, or None when not said.
        sees: the object is said to be seen now (``I see``, ``A green ball is at ...``), as
            opposed to believed to be somewhere (``must be behind me``); for a not_seen
            claim, said of the view (``I see no ball on my right``) rather than of where the
            object is (``the ball is not behind me``).
        side: a bearing in words (``SIDES``), for bearing claims, and for not_seen claims
            about one side only.
        degrees: a bearing in degrees (positive right), likewise.
        metres: a distance, for distance claims.
        rising: health claims: said to go up (True) or down (False); reward claims: said to
            be collected (True) or not (False).
        values: a health comparison's two values, in the order written (from, to).
    """

    kind: str
    span: str
    type: str | None = None
    colour: str | None = None
    sees: bool = True
    side: str | None = None
    degrees: float | None = None
    metres: float | None = None
    rising: bool | None = None
    values: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"claim kind must be one of {', '.join(KINDS)}; got {self.kind!r}")
        if self.type is not None and self.type not in TYPES:
            raise ValueError(f"object type must be one of {', '.join(TYPES)}; got {self.type!r}")
        if self.side is not None and self.side not in SIDES:
            raise ValueError(f"side must be one of {', '.join(SIDES)}; got {self.side!r}")
        needed = {"bearing": self.side is not None or self.degrees is not None,
                  "distance": self.metres is not None,
                  "health_trend": self.rising is not None,
                  "health_comparison": self.rising is not None and self.values is not None,
                  "reward": self.rising is not None}.get(self.kind, True)
        if not needed:
            raise ValueError(f"a {self.kind} claim needs "
                             + {"bearing": "a side or degrees", "distance": "metres",
                                "health_comparison": "rising and two values"}.get(
                                    self.kind, "rising"))

    @property
    def subject(self) -> str:
        """The object as a phrase: ``green ball``, ``wall``, ``food``."""
        if self.colour == "food":
            return "food"
        return " ".join(word for word in (self.colour, self.type or "ball") if word)
