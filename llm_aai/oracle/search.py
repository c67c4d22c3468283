"""The oracle's search: simulate candidate plans from an exact snapshot and keep the best.

A plan is a sequence of AAI actions. Candidates come from a goal-seeking controller run in
the simulator (physics only) from the snapshot: at every step it heads for a waypoint down
the walking-distance field of its target ball (``llm_aai.oracle.navigation``), turning when
it is off course and moving forward otherwise. Variants differ in the order of targets
(nearest first; yellow balls before the episode-ending green; each ball first). When none
of them passes, the search predicts the paths of moving balls (the world simulated with the
agent still) and tries waiting for each at a few spots it can reach before the ball does,
then shoves each pushable block at its corners (tool use: a block that sweeps or knocks a
ball out of a death zone), those that would carry a stranded ball towards walkable ground
first (both in ``llm_aai.oracle.tools``);
then random macro-actions (turn to
a bearing, go n) before handing over to the controller, so it can get round what the map
does not know (balls that fall, a wall that tips), until the budget is spent.

The budget counts simulated AAI steps, not seconds, so a result does not depend on the
machine; the search's randomness comes from the seed only. Everything is deterministic for
a given (arena, seed, budget).

Under the script protocol (``per_frame=False``) the controller uses only the actions a
script can express: forward/backward (``Go``) and turning in place (``Turn``), never both in
one step and never a no-op. ``per_frame=True`` is the ``oracle-frames`` ceiling: any of the
3 x 3 actions per step (turning while moving, waiting), what the physics allows.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

import numpy as np

from llm_aai.oracle.knock import block_gap, knocks, out_of_reach
from llm_aai.oracle.leaps import Leap
from llm_aai.oracle.navigation import (
    UNREACHABLE,
    Goal,
    NavMap,
    agent_pose,
    live_goals,
)
from llm_aai.oracle.tools import (
    CREEP_SPEED,
    MEET_RADIUS,
    PUSH_BACK,
    PUSH_CREEP,
    PUSH_SETTLE,
    SHOVE_LOOKAHEAD,
    SHOVE_SLIDE,
    Meeting,
    Push,
    meetings,
    pushes,
)
from llm_aai.script import Go, Script, Think, Turn, format_script
from llm_aai.sim.simulator import PHYSICS_STEPS_PER_ACTION

DEFAULT_BUDGET = 20_000
"""Simulated AAI steps per episode by default (about 2-5 s of CPU)."""
HORIZON = 700
"""Longest controller rollout (AAI steps) before its end state is scored."""
STUCK_STEPS = 25
AIM_TOLERANCE = 3.5
"""Degrees off a bearing the controller accepts before it turns (a turn step is 6)."""
FIRST_TARGETS = 16
"""Good balls each tried as the first target (a drop from a platform may be one-way)."""
RANDOM_FIRST = 4
"""Of those, the ones tried among the plain candidates and drawn for random macro-actions."""
BLOCK_GAP_WEIGHT = 3.0
"""What a metre between a block and a ball out of reach counts for in a state's score, in
metres walked: shoving a block nearer the ball takes a detour, a walk, a run-up."""
COAST = 0.2
"""Metres the agent coasts per m/s of speed once it stops thrusting (no-op and turn frames
keep 0.9 of the velocity: v dt 0.9 / 0.1, about 0.18 s)."""
STOP_SLACK = 0.3
"""How far short of a point to stop at (m) it may come to rest."""
LEAP_STEPS = 60
"""Most steps a leap (turning to its landing, run-up and flight) may take before the
controller goes back to its waypoints."""
MAX_SCRIPT_STEPS = 500
"""The parser's limit on the steps of one script."""
FORWARD, BACKWARD, RIGHT, LEFT, WAIT = (1, 0), (2, 0), (0, 1), (0, 2), (0, 0)


@dataclass(frozen=True)
class SearchSettings:
    """How the oracle searches.

    Attributes:
        budget: simulated AAI steps the whole episode's search may take.
        per_frame: plan any AAI action per step (``oracle-frames``) instead of script actions.
        seed: seeds the random macro-actions.
        pass_mark: the reward the episode must reach (privileged task knowledge).
    """

    budget: int = DEFAULT_BUDGET
    per_frame: bool = False
    seed: int = 0
    pass_mark: float = 0.0


@dataclass
class Plan:
    """The best action sequence found from a state, and what simulating it gave.

    Attributes:
        actions: AAI actions from the state searched.
        reward: the return the simulation of ``actions`` reached (from the episode start).
        done: whether the episode ended within ``actions``.
        end_reason: how it ended (the simulator's reason), else None.
        target: what the plan heads for first, for the script's thought.
        searched: simulated steps the search took.
    """

    actions: list[tuple[int, int]]
    reward: float
    done: bool
    end_reason: str | None
    target: str = ""
    searched: int = 0
    score: tuple = field(default=(), repr=False)

    def passes(self, pass_mark: float) -> bool:
        """Whether the plan ends the episode with at least ``pass_mark``."""
        return self.done and self.reward >= pass_mark


class _Budget:
    def __init__(self, steps: int) -> None:
        self.left = steps
        self.used = 0

    def take(self) -> bool:
        if self.left <= 0:
            return False
        self.left -= 1
        self.used += 1
        return True


def _wrap(degrees: float) -> float:
    return (degrees + 180.0) % 360.0 - 180.0


class _Controller:
    """Steers the agent to its targets in order; one action per call (see the module doc).

    With a ``meeting`` it first walks to the meeting point and waits there (turning in
    place under the script protocol, which has no no-op) until ``meeting.until``, so that a
    moving ball rolls into it; with a ``push`` it first walks to the push's start, turns to
    its heading, shoves and backs off. Then it carries on with ``order``.
    """

    def __init__(self, nav: NavMap, order: str, per_frame: bool,
                 meeting: Meeting | None = None, push: Push | None = None) -> None:
        self.nav = nav
        self.order = order  # "nearest", "multis", or "first:<geom>"
        self.per_frame = per_frame
        self.meeting = meeting
        self.push = push
        self._shove: list[tuple[int, int]] | None = None
        self._last: tuple[float, float] | None = None
        self._sway = False
        self._steps = 0
        self._arrived = False
        self._waypoint: tuple[float, float] | None = None
        self._refresh = 0
        self._tour: list[int] | None = None
        self._leap: Leap | None = None
        self._leap_steps = 0
        self._leap_running = False
        self._speed = 0.0
        self.first_target: Goal | None = meeting.ball if meeting else None

    def _target(self, sim, x: float, z: float) -> tuple[Goal | None, object]:
        good, _ = live_goals(sim)
        if not good:
            return None, None
        multis_left = any(g.multi for g in good)
        pool = good
        if self.order == "tour":
            if self._tour is None:
                self._tour = _tour(good, (x, z))
            left = {g.geom: g for g in good}
            for geom in self._tour:
                if geom in left:
                    goal = left[geom]
                    return goal, self.nav.field(goal)
            return None, None
        if self.order == "multis" and multis_left:
            pool = [g for g in good if g.multi]
        elif self.order.startswith("first:"):
            wanted = int(self.order[6:])
            first = [g for g in good if g.geom == wanted]
            pool = first or ([g for g in good if g.multi] if multis_left else good)
        best, best_d, best_field = None, UNREACHABLE, None
        for goal in pool:
            grid = self.nav.field(goal)
            d = self.nav.distance(grid, x, z)
            if d == UNREACHABLE:
                gx, gy, gz = goal.position
                d = 1000.0 + math.dist((x, z), (gx, gz))
            if best is None or d < best_d:
                best, best_d, best_field = goal, d, grid
        return best, best_field

    def act(self, sim) -> tuple[int, int]:
        x, _, z, yaw = agent_pose(sim)
        self._speed = float(np.hypot(*sim._agent.velocity[:2]))
        self._steps += 1
        if self.push is not None:
            action = self._pushing(x, z, yaw)
            if action is not None:
                return action
        meeting = self.meeting
        if meeting is not None and self._steps <= meeting.until:
            px, _, pz = meeting.point.position
            self._arrived = self._arrived or math.dist((x, z), (px, pz)) < MEET_RADIUS
            if self._arrived:
                return WAIT if self.per_frame else RIGHT
            return self._steer(x, z, yaw, meeting.point, self.nav.field(meeting.point))
        if meeting is not None:  # waited long enough: back to collecting
            self.meeting, self._waypoint = None, None
        goal, grid = self._target(sim, x, z)
        if goal is None:
            return WAIT if self.per_frame else FORWARD
        if self.first_target is None:
            self.first_target = goal
        return self._steer(x, z, yaw, goal, grid)

    def _pushing(self, x: float, z: float, yaw: float) -> tuple[int, int] | None:
        """The push's next action, or None once it is over (or cannot start in time)."""
        push = self.push
        if self._shove is None:
            px, _, pz = push.start.position
            left = math.dist((x, z), (px, pz))
            speed = math.dist(self._last, (x, z)) if self._last else 0.0
            self._last = (x, z)
            if left >= push.arrive:
                if self._steps > push.walk:
                    self.push = None  # never got there: give up the push
                    return None
                nav = push.detour or self.nav
                grid = nav.field(push.start, push.avoid)
                action = self._steer(x, z, yaw, push.start, grid, nav)
                if action == FORWARD and left < PUSH_CREEP and speed > CREEP_SPEED:
                    # coast: the agent slides on for metres, so near the start it creeps
                    # up in single steps, each taken once it has nearly stopped
                    self._sway = not self._sway
                    return WAIT if self.per_frame else (RIGHT if self._sway else LEFT)
                return action
            error = _wrap(push.heading - yaw)
            if abs(error) > AIM_TOLERANCE:
                return RIGHT if error > 0 else LEFT
            hold = WAIT if self.per_frame else RIGHT
            self._shove = [FORWARD] * push.steps + [BACKWARD] * PUSH_BACK + [hold] * PUSH_SETTLE
            self._waypoint = None
        if self._shove:
            action = self._shove.pop(0)
            if action == FORWARD and self._deadly_ahead(x, z, push.heading):
                # stop short: the agent follows the block, and slides on when it lets go
                while self._shove and self._shove[0] == FORWARD:
                    self._shove.pop(0)
                action = self._shove.pop(0) if self._shove else action
            self._last = (x, z)
            return action
        self.push = None
        return None

    def _deadly_ahead(self, x: float, z: float, heading: float) -> bool:
        """Whether the agent, running on along ``heading``, would soon be where it may not go.

        That is a death zone or a red ball on the walking map.
        """
        speed = math.dist(self._last, (x, z)) if self._last else 0.0
        reach = SHOVE_LOOKAHEAD + SHOVE_SLIDE * speed
        dx, dz = math.sin(math.radians(heading)), math.cos(math.radians(heading))
        for k in range(1, int(reach / 0.25) + 2):
            ahead = min(k * 0.25, reach)
            if self.nav.blocked[self.nav.cell(x + dx * ahead, z + dz * ahead)]:
                return True
        return False

    def _leaping(self, x: float, z: float, yaw: float, grid, nav: NavMap
                 ) -> tuple[int, int] | None:
        """The next action of a leap under way or starting here, else None.

        At a leap's start (``NavMap.leap_at``) it turns in place to face the landing, then
        runs straight at it without turning (a turn would cost the run-up's speed) until it
        is past the landing or the leap has taken too long.
        """
        leap = self._leap
        if leap is None:
            if grid is None:
                return None
            leap = nav.leap_at(grid, x, z)
            if leap is None:
                return None
            self._leap, self._leap_steps, self._leap_running = leap, 0, False
        self._leap_steps += 1
        sx, sz = nav.centre(leap.start)
        lx, lz = nav.centre(leap.land)
        along = ((x - sx) * (lx - sx) + (z - sz) * (lz - sz)) / max(leap.length, 1e-9)
        if along >= leap.length - 0.25 or self._leap_steps > LEAP_STEPS:
            self._leap, self._waypoint = None, None
            return None
        if not self._leap_running:
            error = _wrap(math.degrees(math.atan2(lx - x, lz - z)) - yaw)
            if abs(error) > AIM_TOLERANCE:
                return RIGHT if error > 0 else LEFT
            self._leap_running = True
        return FORWARD

    def _steer(self, x: float, z: float, yaw: float, goal: Goal, grid,
               nav: NavMap | None = None) -> tuple[int, int]:
        """One action towards ``goal`` along the walking-distance field ``grid`` of ``nav``.

        ``nav`` is the controller's map unless given (a push's detour round its block).
        """
        nav = nav or self.nav
        leaping = self._leaping(x, z, yaw, grid, nav)
        if leaping is not None:
            return leaping
        gx, _, gz = goal.position
        aim = (gx, gz)
        stop = False
        if grid is not None and nav.distance(grid, x, z) < UNREACHABLE:
            here, there = nav.cell(x, z), nav.cell(gx, gz)
            if not nav._straight(here, there, field=grid):
                if self._refresh <= 0 or self._waypoint is None:
                    self._waypoint = nav.waypoint(grid, x, z)
                    self._refresh = 3
                self._refresh -= 1
                if self._waypoint is not None:
                    aim, stop = (self._waypoint.x, self._waypoint.z), self._waypoint.stop
        bearing = math.degrees(math.atan2(aim[0] - x, aim[1] - z))
        error = _wrap(bearing - yaw)
        turn = 0 if abs(error) <= AIM_TOLERANCE else (1 if error > 0 else 2)
        if stop and math.dist((x, z), aim) < COAST * self._speed + STOP_SLACK:
            # coast to the point: turning in place brakes (a no-op under action control)
            return WAIT if self.per_frame else (0, turn or 1)
        if self.per_frame:
            move = 1 if abs(error) < 45.0 else 0
            return (move, turn)
        return (0, turn) if turn else FORWARD


def _tour(goals: list[Goal], start: tuple[float, float]) -> list[int]:
    """An order to collect many balls in: nearest neighbour, then 2-opt, straight-line lengths.

    Yellow balls come first and an episode-ending green one last, so the tour does not end
    the episode early.
    """
    multis = [g for g in goals if g.multi]
    enders = [g for g in goals if not g.multi]
    points = {g.geom: (g.position[0], g.position[2]) for g in goals}
    order: list[int] = []
    here = start
    remaining = [g.geom for g in multis]
    while remaining:
        nearest = min(remaining, key=lambda geom: math.dist(here, points[geom]))
        order.append(nearest)
        remaining.remove(nearest)
        here = points[nearest]
    improved = True
    while improved and len(order) > 3:
        improved = False
        for i in range(len(order) - 1):
            a = start if i == 0 else points[order[i - 1]]
            for j in range(i + 1, len(order)):
                b, c = points[order[i]], points[order[j]]
                d = points[order[j + 1]] if j + 1 < len(order) else None
                before = math.dist(a, b) + (math.dist(c, d) if d else 0.0)
                after = math.dist(a, c) + (math.dist(b, d) if d else 0.0)
                if after < before - 1e-9:
                    order[i : j + 1] = reversed(order[i : j + 1])
                    improved = True
    if enders:
        here = points[order[-1]] if order else start
        order.append(min(enders, key=lambda g: math.dist(here, points[g.geom])).geom)
    return order


def _steps_left(sim) -> int:
    """AAI steps until the time limit (a large number when there is none)."""
    rules = sim._rules
    if not rules.time_limit:
        return 10**6
    physics = rules.steps_per_unit * rules.time_limit - rules.physics_steps
    return max(0, -(-physics // PHYSICS_STEPS_PER_ACTION))


def _score(sim, nav: NavMap, pass_mark: float) -> tuple:
    """Order of end states: passed > ended well > still going (closer is better) > lost."""
    reward = sim.total_reward
    if sim.done:
        if reward >= pass_mark:  # the runner's rule, however it ended
            return (3, reward)
        if sim.end_reason in ("good_goal", "all_multis"):
            return (1, reward)
        return (-1, reward)
    x, _, z, _ = agent_pose(sim)
    good, _ = live_goals(sim)
    nearest = UNREACHABLE
    for goal in good:
        d = nav.distance(nav.field(goal), x, z)
        if d == UNREACHABLE:
            gx, _, gz = goal.position
            gap = block_gap(sim, goal) if out_of_reach(nav, goal) else None
            # a ball out of reach: how near a block is to knocking it down, else the agent
            d = 60.0 + (BLOCK_GAP_WEIGHT * gap if gap is not None
                        else math.dist((x, z), (gx, gz)))
        nearest = min(nearest, d)
    if nearest == UNREACHABLE:
        nearest = 100.0
    return (2, reward - 0.02 * nearest)


def _rollout(sim, nav: NavMap, prefix: list[tuple[int, int]], order: str,
             settings: SearchSettings, budget: _Budget, horizon: int,
             meeting: Meeting | None = None, push: Push | None = None) -> Plan | None:
    """Play ``prefix`` then the controller from the simulator's current state."""
    actions: list[tuple[int, int]] = []
    controller = _Controller(nav, order, settings.per_frame, meeting, push)
    recent: list[tuple[float, float]] = []
    for action in prefix:
        if sim.done or len(actions) >= horizon:
            break
        if not budget.take():
            return None
        sim.step(*action)
        actions.append(action)
    while not sim.done and len(actions) < horizon:
        action = controller.act(sim)
        if not budget.take():
            break
        sim.step(*action)
        actions.append(action)
        x, _, z, _ = agent_pose(sim)
        recent.append((x, z))
        if len(recent) > STUCK_STEPS:
            recent.pop(0)
            if (math.dist(recent[0], recent[-1]) < 0.05 and action == FORWARD
                    and controller.meeting is None and controller.push is None):
                break  # pressing against something: score where it stands
    if not actions:
        return None
    target = controller.first_target
    name = ""
    if meeting is not None:
        px, _, pz = meeting.point.position
        name = f"the moving {target.name}: wait for it at x {px:.1f}, z {pz:.1f}"
    elif push is not None:
        px, _, pz = push.start.position
        name = (f"a block: push it from x {px:.1f}, z {pz:.1f} heading {push.heading:.0f}"
                + (f", then the {target.name}" if target is not None else ""))
    elif target is not None:
        name = f"the {target.name} at x {target.position[0]:.1f}, z {target.position[2]:.1f}"
    return Plan(actions, sim.total_reward, sim.done, sim.end_reason, name,
                score=_score(sim, nav, settings.pass_mark))


def _extras(sim, root, nav: NavMap, good: list[Goal], budget: _Budget, horizon: int):
    """The deliberate candidates after the plain ones, made when first asked for.

    Each further good ball as the first target (beyond the ``RANDOM_FIRST`` the random
    macro-actions draw from), then waiting for each moving ball where it will pass, then
    shoves of blocks aimed at balls out of reach (``llm_aai.oracle.knock``), then shoves of
    each block at its corners; as (prefix, order, meeting, push).
    """
    for goal in good[RANDOM_FIRST:FIRST_TARGETS]:
        yield [], f"first:{goal.geom}", None, None
    sim.restore(root)
    for meeting in meetings(sim, nav, budget, horizon):
        yield [], "nearest", meeting, None
    sim.restore(root)
    for push in knocks(sim, nav) + pushes(sim, nav):
        yield [], "nearest", None, push


def _random_prefix(rng: random.Random, per_frame: bool) -> list[tuple[int, int]]:
    """One or two macro-actions: turn to a random bearing, go a random distance."""
    prefix: list[tuple[int, int]] = []
    for _ in range(rng.choice((1, 1, 2))):
        turns = rng.randint(-30, 30)
        prefix += [RIGHT if turns > 0 else LEFT] * abs(turns)
        go = rng.choice((0, 3, 6, 10, 15, 25, 40))
        back = rng.random() < 0.15
        prefix += [BACKWARD if back else FORWARD] * go
        if per_frame and rng.random() < 0.3:
            prefix += [WAIT] * rng.choice((5, 15, 40))
    return prefix


def plan_script(sim, settings: SearchSettings, budget: int,
                hint: list[tuple[int, int]] | None = None) -> Plan:
    """Search for the best plan from the simulator's current state; leave the state as it was.

    Args:
        sim: a loaded simulator mid-episode (render or not; only physics is used).
        settings: the search settings (per-action or script actions, seed, pass mark).
        budget: simulated AAI steps this search may take.
        hint: a plan to try first (the rest of the previous script's plan).

    Returns:
        The best plan found (possibly empty if the budget was 0).
    """
    root = sim.snapshot()
    horizon = min(HORIZON, _steps_left(sim))
    if _steps_left(sim) > HORIZON:
        # No rollout reaches the end of this episode, so none can be known to pass: keep
        # most of the budget for the scripts after this one.
        budget = max(budget // 3, min(budget, 2 * HORIZON))
    spent = _Budget(budget)
    rng = random.Random(settings.seed)
    nav = NavMap(sim)
    good, _ = live_goals(sim)
    orders = ["nearest", "multis"] + [f"first:{g.geom}" for g in good[:RANDOM_FIRST]]
    if sum(g.multi for g in good) > 3:
        orders.insert(0, "tour")
    best: Plan | None = None
    try:
        plain: list[tuple[list[tuple[int, int]], str]] = []
        if hint:
            plain.append((hint, "nearest"))
        plain += [([], order) for order in orders]
        extras = _extras(sim, root, nav, good, spent, horizon)
        tried = 0
        while spent.left > 0:
            meeting = push = None
            if tried < len(plain):
                prefix, order = plain[tried]
            elif (tried - len(plain)) % 2 == 0 and (extra := next(extras, None)) is not None:
                # nothing plain passes: every other try is a more deliberate one (another
                # first ball, waiting for a moving ball, shoving a block), the others the
                # random macro-actions
                prefix, order, meeting, push = extra
            else:
                prefix, order = _random_prefix(rng, settings.per_frame), rng.choice(orders)
            tried += 1
            sim.restore(root)
            plan = _rollout(sim, nav, prefix, order, settings, spent, horizon, meeting, push)
            if plan is not None and (best is None or plan.score > best.score):
                best = plan
            if best is not None and best.score[0] == 3:
                break  # it passes: good enough
            if tried > 2000:
                break
    finally:
        sim.restore(root)
    if best is None:
        best = Plan([], sim.total_reward, False, None)
    best.searched = spent.used
    return best


def to_script(actions: list[tuple[int, int]], thought: str) -> Script:
    """The Think/Go/Turn script that takes exactly ``actions`` (script actions only)."""
    commands: list = [Think(thought.replace(")", "").replace('"', "'"))]
    k = 0
    while k < len(actions):
        action = actions[k]
        run = 1
        while k + run < len(actions) and actions[k + run] == action:
            run += 1
        k += run
        if action == FORWARD or action == BACKWARD:
            sign = 1 if action == FORWARD else -1
            while run:
                n = min(run, 100)
                commands.append(Go(sign * n))
                run -= n
        elif action == RIGHT or action == LEFT:
            sign = 1 if action == RIGHT else -1
            while run:
                n = min(run, 120)
                commands.append(Turn(sign * 6 * n))
                run -= n
        else:
            raise ValueError(f"a script cannot take the action {action}")
    return Script(tuple(commands))


def describe(plan: Plan, steps: int) -> str:
    """The script's Think: what the oracle plans and expects."""
    target = plan.target or "the best place it found"
    if plan.passes(float("-inf")) and plan.done:
        outcome = f"the episode ends: {plan.end_reason}, reward {plan.reward:.2f}"
    else:
        outcome = f"then replan; reward so far {plan.reward:.2f}"
    return (f"Oracle plan: head for {target}; this script takes {steps} of the "
            f"{len(plan.actions)} planned steps; {outcome}")


__all__ = ["DEFAULT_BUDGET", "Plan", "SearchSettings", "describe", "format_script",
           "plan_script", "to_script"]
