"""Animal-AI's health, reward, episode-end and blackout rules, in plain Python.

Nothing here knows MuJoCo: the simulator tells the rules, once per physics step, which goals
the agent touched and which zones it overlaps, and the rules answer with reward events. That
keeps the game's arithmetic testable on its own (docs/animal-ai-facts.md sections 2, 3 and 5):

- health starts at 100; every physics step costs ``1/(5t)`` reward and ``100/(5t)`` health
  (nothing when ``t == 0``); the time limit is ``5t`` physics steps (AAI's "x5" quirk; the
  2019 build counts ``t`` and blackouts in units of 3 physics steps, ``steps_per_unit=3``);
- every event adds its reward in full to the return, while health (+100 x reward) is kept
  within 0-100 (a death zone's -100 leaves 0, never less); health <= 0 ends the episode (in
  the 3.x/4.x builds; the 2019 build has no health,
  ``health_ends=False``: health then stops at 0 and only goals, death zones and the time limit
  end an episode, ``llm_aai.sim.builds``);
- GoodGoal/BadGoal/DecoyGoal (and bounce forms) and a DeathZone end the episode after the
  health update; a touched goal paying more than 0 counts as collected; a multi goal is
  removed, and ends the episode instead when the goals collected (itself included) reach its
  quota: the number of good goals of any kind for a GoodGoalMulti (so a GoodGoal in the arena
  keeps it going), the number of BadGoalMulti for a BadGoalMulti, 1 for a DecoyGoalMulti;
- a HotZone costs ``min(10 x decay, -0.001)`` extra reward per physics step of overlap
  (2019: ``min(10 x decay, -0.00001)``, ``hot_floor``).
"""

from __future__ import annotations

from dataclasses import dataclass

PHYSICS_STEPS_PER_UNIT = 5
"""``t`` and blackout values count in units of 5 physics steps (AAI's decision-period quirk;
3.x/4.x, the default; the 2019 build's unit is 3, ``llm_aai.sim.builds``)."""
PHYSICS_STEPS_PER_ACTION = 3
"""One agent (environment) step is 3 physics steps with the same action (decision period 3)."""
HOT_FLOOR = -0.001
"""A hot zone costs at least this per physics step (3.x/4.x)."""
HEALTH_MAX = 100.0


@dataclass(frozen=True)
class RewardEvent:
    """One contribution to the reward.

    Attributes:
        kind: the object's name (``GoodGoalMulti``, ``DeathZone``...), ``"decay"`` or
            ``"hot_zone"`` (those two summed over the physics steps of one AAI step).
        reward: its reward (health changes by 100 x reward, capped at 100).
        step: the AAI step (1-based count of ``Simulator.step`` calls) it happened in.
    """

    kind: str
    reward: float
    step: int


class Blackouts:
    """When the lights are off, from an arena's ``blackouts`` list (docs/animal-ai-facts.md §5).

    The light toggles at the physics step whose count equals ``value x 5`` (``value x
    steps_per_unit``). A single negative value ``-N`` toggles every ``N`` units forever (off at
    N, on at 2N, ...).
    """

    def __init__(self, values: tuple[int, ...] | list[int], *,
                 steps_per_unit: int = PHYSICS_STEPS_PER_UNIT) -> None:
        values = [int(v) for v in values]
        self._period = 0
        self._toggles: list[int] = []
        if values and values[0] < 0:
            self._period = -values[0] * steps_per_unit
        else:
            if any(b <= a for a, b in zip(values, values[1:], strict=False)):
                raise ValueError(f"blackouts must be strictly increasing, got {values}")
            self._toggles = [v * steps_per_unit for v in values]

    def dark(self, physics_step: int) -> bool:
        """Whether the observation is black after ``physics_step`` physics steps."""
        if self._period:
            return (physics_step // self._period) % 2 == 1
        toggled = sum(1 for t in self._toggles if t <= physics_step)
        return toggled % 2 == 1


class Rules:
    """Health, return and episode end for one episode.

    Args:
        time_limit: the arena's ``t`` (0 = unlimited).
        good_goals: AAI's ``numberOfGoals``: GoodGoal, GoodGoalMulti and their Bounce forms.
        bad_multis: the BadGoalMulti objects in the arena, a BadGoalMulti's ``numberOfGoals``.
        health_ends: whether health at 0 ends the episode (3.x/4.x); False for the 2019
            build, whose agent has no health (health is still reported, never below 0).
        steps_per_unit: physics steps in one unit of ``t`` (5 in 3.x/4.x, 3 in 2019).
        hot_floor: a hot zone costs at least this per physics step.
    """

    def __init__(self, time_limit: int, good_goals: int, *, bad_multis: int = 0,
                 health_ends: bool = True,
                 steps_per_unit: int = PHYSICS_STEPS_PER_UNIT,
                 hot_floor: float = HOT_FLOOR) -> None:
        if time_limit < 0:
            raise ValueError(f"time limit must be >= 0, got {time_limit}")
        if steps_per_unit < 1:
            raise ValueError(f"steps per unit of t must be >= 1, got {steps_per_unit}")
        self.time_limit = int(time_limit)
        self.good_goals = int(good_goals)
        self.quotas = {"good_goals": self.good_goals, "bad_multis": int(bad_multis), "prefab": 1}
        self.health_ends = bool(health_ends)
        self.steps_per_unit = int(steps_per_unit)
        self.decay = -1.0 / (self.steps_per_unit * time_limit) if time_limit else 0.0
        self.hot = min(10.0 * self.decay, hot_floor)
        self.health = HEALTH_MAX
        self.total_reward = 0.0
        self.physics_steps = 0
        self.goals_collected = 0  # Unity's numberOfGoalsCollected
        self.done = False
        self.end_reason: str | None = None

    def _add(self, reward: float) -> None:
        # Unity's UpdateHealth: the reward counts in full, health moves by 100 x reward and is
        # kept within 0-100 whatever the event (a death zone's -100 included).
        self.total_reward += reward
        self.health = min(max(self.health + 100.0 * reward, 0.0), HEALTH_MAX)

    def _end(self, reason: str) -> None:
        if not self.done:
            self.done, self.end_reason = True, reason

    def tick(self, in_hot_zone: bool) -> tuple[float, float]:
        """Account for one physics step of time: decay, and the hot zone if overlapping.

        Returns:
            (decay reward, hot-zone reward) of this step, for the caller's event summary.
        """
        if self.done:
            return 0.0, 0.0
        self.physics_steps += 1
        self._add(self.decay)
        hot = self.hot if in_hot_zone else 0.0
        if hot:
            self._add(hot)
        self._check_health()
        if (
            not self.done
            and self.time_limit
            and self.physics_steps >= self.steps_per_unit * self.time_limit
        ):
            self._end("time_limit")
        return self.decay, hot

    def touch_goal(self, name: str, reward: float, *, multi: bool,
                   quota: str | None = "good_goals") -> float:
        """The agent touched a goal ball; returns the reward it paid (0 once the episode ended).

        Args:
            name: the goal's object name (for the caller's events; the rule reads the rest).
            reward: what it pays now.
            multi: whether it is a multi goal (removed unless it ends the episode).
            quota: for a multi goal, which count ends the episode (``Quota``'s values);
                not read for other goals.

        Raises:
            ValueError: a multi goal with a quota that is none of ``Quota``'s.
        """
        if self.done:
            return 0.0
        if multi and quota not in self.quotas:
            raise ValueError(f"unknown multi-goal quota {quota!r} for {name}; "
                             f"known: {', '.join(self.quotas)}")
        self._add(reward)
        if 0.0 < reward < 10.0:  # Goal.cs: only a positive goal counts as collected
            self.goals_collected += 1
        if not multi:
            self._end(_ending(reward))
        elif self.goals_collected >= self.quotas[quota]:
            self._end("all_multis" if quota == "good_goals" else _ending(reward))
        self._check_health()
        return reward

    def enter_death_zone(self) -> float:
        """The agent entered a death zone: -1 and the episode ends."""
        if self.done:
            return 0.0
        self._add(-1.0)
        self._end("death_zone")
        return -1.0

    def _check_health(self) -> None:
        if self.health <= 0.0:
            self.health = 0.0
            if self.health_ends:
                self._end("health_zero")


def _ending(reward: float) -> str:
    """The end reason of a goal that completes the arena, from what it paid."""
    if reward > 0:
        return "good_goal"
    return "bad_goal" if reward < 0 else "decoy_goal"
