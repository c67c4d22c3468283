"""Plan metrics: how good a complete, open-loop plan is, beyond passed or failed.

Per episode: whether the plan parsed (executable), passed and reward, the constraint
violations along the path it drove (death or hot zone entered, wall or fence hit, red ball
touched), path efficiency (the reference plan's steps / the steps taken, for passed plans)
and similarity to a reference plan: normalised longest common subsequence over frame
actions, and F1 over commands. The reference is an input (``ReferencePlan``), so any
planner's plan can serve; ``llm_aai.analysis.plan_reference`` gives the oracle's for the same
task and seed. Aggregation is per task and per level.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

import pandas as pd

from llm_aai.script import Command, Script, Think

Action = tuple[int, int]


@dataclass(frozen=True)
class TraceStep:
    """One environment step of an executed plan, as the metrics need it.

    Attributes:
        events: the kinds of reward events of the step (``DeathZone``, ``hot_zone``,
            ``BadGoal``...; ``decay`` may be present and is ignored).
        touched: what the agent touched: ``"wall"`` for walls, ramps, tunnels and blocks,
            ``"fence"`` for the arena's edge, ``"ball"`` and ``"box"`` otherwise.
    """

    events: frozenset[str] = frozenset()
    touched: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Violations:
    """Constraint violations along a path; each counts entries, not steps spent inside."""

    death_zone: int = 0
    hot_zone: int = 0
    wall_hit: int = 0
    red_ball: int = 0

    @property
    def total(self) -> int:
        """All violations together."""
        return self.death_zone + self.hot_zone + self.wall_hit + self.red_ball


_RED_BALLS = frozenset({"BadGoal", "BadGoalBounce"})


def violations(trace: Sequence[TraceStep]) -> Violations:
    """Count each violation once per entry: a run of consecutive steps in contact is one."""
    def entries(flags: Iterable[bool]) -> int:
        count, before = 0, False
        for flag in flags:
            count += flag and not before
            before = flag
        return count

    return Violations(
        death_zone=entries("DeathZone" in s.events for s in trace),
        hot_zone=entries("hot_zone" in s.events for s in trace),
        wall_hit=entries(bool(s.touched & {"wall", "fence"}) for s in trace),
        red_ball=entries(bool(s.events & _RED_BALLS) for s in trace),
    )


def lcs_length(a: Sequence, b: Sequence) -> int:
    """Length of the longest common subsequence of ``a`` and ``b`` (O(len a x len b))."""
    if not a or not b:
        return 0
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b, start=1):
            current.append(previous[j - 1] + 1 if x == y else max(previous[j], current[-1]))
        previous = current
    return previous[-1]


def lcs_similarity(actions: Sequence[Action], reference: Sequence[Action]) -> float:
    """LCS over frame actions divided by the longer sequence: 1 for equal plans, 0 for none."""
    longest = max(len(actions), len(reference))
    return lcs_length(actions, reference) / longest if longest else 1.0


def _command_bag(commands: Iterable[Command]) -> Counter:
    return Counter(command.format() for command in commands if not isinstance(command, Think))


def command_f1(commands: Iterable[Command], reference: Iterable[Command]) -> float:
    """F1 over commands (``Go(5)``, ``Turn(-30)``; thoughts left out) as multisets."""
    ours, theirs = _command_bag(commands), _command_bag(reference)
    if not ours and not theirs:
        return 1.0
    common = sum((ours & theirs).values())
    if not common:
        return 0.0
    precision, recall = common / sum(ours.values()), common / sum(theirs.values())
    return 2 * precision * recall / (precision + recall)


@dataclass(frozen=True)
class ReferencePlan:
    """The plan another planner made for the same task and seed, to compare a plan with.

    Attributes:
        script: its script.
        steps: the steps its script drove when played open-loop from the same start (fewer
            than the script's when the episode ended first, e.g. at the green ball).
        passed: whether that episode passed; path efficiency needs a reference that did.
    """

    script: Script
    steps: int
    passed: bool


def path_efficiency(steps_taken: int, reference_steps: int, passed: bool) -> float | None:
    """Reference steps / steps taken for a passed plan; None for a failed one."""
    if not passed or steps_taken <= 0:
        return None
    return reference_steps / steps_taken


@dataclass(frozen=True)
class PlanMetrics:
    """One episode's plan metrics (similarities None without a reference or a parse)."""

    task_id: str
    level: int
    executable: bool
    passed: bool
    reward: float
    steps: int
    death_zone: int
    hot_zone: int
    wall_hit: int
    red_ball: int
    violations: int
    path_efficiency: float | None
    lcs: float | None
    command_f1: float | None


def plan_metrics(*, task_id: str, level: int, plan: Script | None, passed: bool, reward: float,
                 trace: Sequence[TraceStep],
                 reference: ReferencePlan | None = None) -> PlanMetrics:
    """The metrics of one executed plan.

    Args:
        task_id: the task played.
        level: its level.
        plan: the parsed plan; None if the reply did not parse (not executable).
        passed: whether the episode reached its pass mark.
        reward: the episode's return.
        trace: every step the plan drove (its actions' steps, cut where the episode ended).
        reference: a reference plan for the same task and seed, e.g. the oracle's. Path
            efficiency is its steps / the plan's, when both passed; the similarities compare
            the scripts whether they passed or not.
    """
    counts = violations(trace)
    similar = plan is not None and reference is not None
    steps = len(trace)
    theirs = reference.script if reference is not None else None
    return PlanMetrics(
        task_id=task_id, level=level, executable=plan is not None, passed=passed,
        reward=reward, steps=steps, **asdict(counts), violations=counts.total,
        path_efficiency=(path_efficiency(steps, reference.steps, passed)
                         if reference is not None and reference.passed else None),
        lcs=lcs_similarity(plan.actions(), theirs.actions()) if similar else None,
        command_f1=command_f1(plan.commands, theirs.commands) if similar else None,
    )


def aggregate(metrics: Sequence[PlanMetrics], by: str = "level") -> pd.DataFrame:
    """Means per ``level`` or ``task_id`` (rates for the booleans, counts per episode).

    Raises:
        ValueError: ``by`` is neither ``level`` nor ``task_id``.
    """
    if by not in ("level", "task_id"):
        raise ValueError(f"aggregate by 'level' or 'task_id', got {by!r}")
    frame = pd.DataFrame([asdict(m) for m in metrics])
    columns = ["executable", "passed", "reward", "death_zone", "hot_zone", "wall_hit",
               "red_ball", "violations", "path_efficiency", "lcs", "command_f1"]
    table = frame.groupby(by)[columns].mean(numeric_only=False)
    table.insert(0, "episodes", frame.groupby(by).size())
    return table
