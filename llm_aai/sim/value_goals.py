"""A goal whose value changes over time: DecayGoal and RipenGoal (docs/animal-ai-facts.md §4).

Unity runs both on one script (``DecayGoal.cs``) whose prefabs never flip its direction, so
the value can only fall: it waits ``delay`` physics steps, then moves by the rate each step
until it reaches the final value, and a touch pays the value of that moment. Its colour
slides from the prefab's initial colour to its final one as the value goes. Kept apart from
MuJoCo: the simulator asks it for the value and colour once per physics step.
"""

from __future__ import annotations

from llm_aai.arena.timings import GoalTimings

MAX_VALUE = 5.0
"""``DecayGoal.cs`` clamps the initial and final values to the ball's largest size."""
MIDWAY_WHITE = 0.1
"""Halfway through, the colour is lifted by up to this much white (``UpdateColour``)."""


def _clamp(value: float, low: float, high: float) -> float:
    return min(max(value, low), high)


class ValueGoal:
    """One changing goal's state, stepped as Unity's ``FixedUpdate`` steps it.

    Args:
        timings: the instance's values, rate and delay as written (or defaulted).
        initial_color / final_color: RGB 0-1 at the initial and the final value.
    """

    def __init__(self, timings: GoalTimings, initial_color, final_color) -> None:
        self.initial = _clamp(timings.initial, 0.0, MAX_VALUE)
        final = _clamp(timings.final, 0.0, MAX_VALUE)
        self.final = min(final, self.initial)  # Start: a higher final value is ignored
        self.rate = -abs(timings.rate)  # CheckIfNeedToFlip: the value only falls
        self.delay_left = round(timings.delay)
        self.value = self.initial
        self.decaying = False
        self.proportion = 1.0  # Start paints the initial colour
        self._colors = (tuple(initial_color), tuple(final_color))

    def fixed_update(self) -> None:
        """One physics step: count the delay down, then move the value towards the final."""
        if self.value >= self.initial and not self.decaying:
            if self.delay_left > 0:
                self.delay_left -= 1
            else:
                self.decaying = True
                self._update(0.0)
        if self.decaying:
            self._update(self.rate)
        if self.value <= self.final and self.decaying:
            self.decaying = False

    def _update(self, rate: float) -> None:
        self.value = _clamp(self.value + rate, self.final, self.initial)
        width = self.initial - self.final
        self.proportion = (self.value - self.final) / width if width else 0.0

    @property
    def color(self) -> tuple[float, float, float]:
        """The colour now: the initial colour at the initial value, the final one at the end."""
        p = _clamp(self.proportion, 0.0, 1.0)
        lift = (0.5 - abs(p - 0.5)) * MIDWAY_WHITE
        start, end = self._colors
        return tuple(min(1.0, p * a + (1 - p) * b + lift) for a, b in zip(start, end,
                                                                           strict=True))
