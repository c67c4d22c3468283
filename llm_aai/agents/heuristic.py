"""A vision baseline: head for the biggest yellow or green ball, steer clear of red.

It needs no model and shows what plain colour segmentation achieves on the testbed,
which puts the LLM scores in context. Given no image (``--observation text``) it reads the
text observation instead, with the same policy: the probe is then playable offline. It
writes Think/Go/Turn script text like a model does, so its replies go through the same
parser and logs. Everything it does is a function of the current frame (or text) and a
``random.Random(seed)``, so a run is reproducible.

With per-action control (``control="action"``) it acts per step: each reply is the first
action of its plan, repeated as long as the plan repeats it (up to the control's bound). A
ball in view is planned for afresh on every frame; while it searches, it carries on with the
search plan it made, so a full turn is still a full turn before it moves elsewhere.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from llm_aai.agents.base import AgentReply, PriorTurn, TurnInput
from llm_aai.agents.text_reading import SeenObject, View, read_view
from llm_aai.agents.vision import (
    Blob,
    Camera,
    classify_hsv,
    find_blobs,
    floor_mask,
    go_steps_for_distance,
    hsv,
)
from llm_aai.protocol.action_control import MAX_REPEAT, action_reply
from llm_aai.script import (
    DEGREES_PER_STEP,
    NOOP,
    Action,
    Command,
    Go,
    Script,
    Think,
    Turn,
    format_script,
)

__all__ = ["HeuristicAgent", "HeuristicSettings"]


@dataclass(frozen=True)
class HeuristicSettings:
    """Tunable numbers of the baseline (defaults calibrated on the Unity recording).

    Attributes:
        min_ball_area: smallest blob (pixels at 512 px) taken for a ball.
        overshoot_m: how far past a ball's centre to aim, so the agent runs through it.
        far_m: beyond this, go half way and look again.
        corridor_m: half-width of the path kept clear of red, in metres.
        min_free_m: explore forward only if this much floor is free ahead.
        explore_turns: the turn sizes (degrees) picked from while searching.
        explore_go: range of Go steps once a full turn showed nothing.

    """

    min_ball_area: int = 24
    overshoot_m: float = 1.2
    far_m: float = 15.0
    corridor_m: float = 0.7
    min_free_m: float = 3.0
    explore_turns: tuple[int, ...] = (60, 66, 72, 78, 84, 90)
    explore_go: tuple[int, int] = (6, 14)


def _turn_command(degrees: float) -> Turn | None:
    steps = round(degrees / DEGREES_PER_STEP)
    return Turn(steps * DEGREES_PER_STEP) if steps else None


def _dangerous(thing: SeenObject) -> bool:
    return thing.noun.startswith(("red ball", "red death zone", "orange hot zone"))


def _text_target(objects: Sequence[SeenObject]) -> SeenObject | None:
    """Yellow first (green ends the level), biggest first, ones in the open before glass."""
    for colour in ("yellow ball", "green ball"):
        balls = [o for o in objects if o.noun.startswith(colour)]
        if balls:
            return min(balls, key=lambda o: (o.through_glass, -o.size, o.distance))
    return None


def _plausible_ball(camera: Camera, blob: Blob) -> bool:
    """Reject patches too small for a ball standing where they touch the floor.

    A ball at least 0.5 m wide whose bottom is at floor distance d spans at least
    f * 0.5 / d pixels; a few yellowish pixels near the bottom of the image are floor
    texture, not a ball at arm's length. (A ball on a platform looks farther than it
    is, which only loosens the test.)
    """
    distance = camera.floor_distance(blob.bottom)
    if distance is None:
        return True
    smallest = camera.focal * 0.5 / distance
    return blob.width >= 0.4 * smallest


class HeuristicAgent:
    """Turns toward the biggest visible food ball, detours around red, explores otherwise.

    Args:
        settings: thresholds and step sizes.
        name: agent name in logs.
        control: ``"script"`` (a script per reply) or ``"action"`` (one action per reply).

    """

    def __init__(self, settings: HeuristicSettings | None = None, name: str = "heuristic",
                 control: str = "script"):
        if control not in ("script", "action"):
            raise ValueError(f"control must be script or action, got {control!r}")
        self.settings = settings or HeuristicSettings()
        self.name = name
        self.control = control
        self._queued: list[Action] = []
        self._queued_thought = ""
        self._rng = random.Random(0)
        self._searched_deg = 0
        self._turn_sign = 1

    def start_episode(self, system_prompt: str, seed: int,
                      prelude: Sequence[PriorTurn] = ()) -> None:
        """Reset the search state.

        The prompt and any worked example (``prelude``) are not needed by a
        hand-written policy.
        """
        self._rng = random.Random(seed)
        self._searched_deg = 0
        self._turn_sign = self._rng.choice((-1, 1))
        self._queued = []

    def act(self, turn: TurnInput) -> AgentReply:
        """Plan from the newest frame (or, with no image, the text) and return the script.

        Raises:
            ValueError: the turn has neither an image nor a text observation.
        """
        if self.control == "action":
            if not turn.images:
                raise ValueError("the heuristic agent plays action control from images; "
                                 "use --control script with --observation text")
            return AgentReply(text=self._next_action_reply(np.asarray(turn.images[-1])),
                              model=self.name)
        if turn.images:
            commands = self.plan(np.asarray(turn.images[-1]))
        else:
            commands = self.plan_from_text(read_view(turn.text))
        return AgentReply(text=format_script(Script(tuple(commands))), model=self.name)

    def _next_action_reply(self, frame: np.ndarray) -> str:
        """The next action of the current plan, replanning unless a search is under way."""
        if not self._queued or self._sees_food(frame):
            script = Script(tuple(self.plan(frame)))
            self._queued = list(script.actions()) or [NOOP]
            self._queued_thought = script.thoughts[0] if script.thoughts else ""
        action = self._queued[0]
        repeat = 1
        while repeat < min(MAX_REPEAT, len(self._queued)) and self._queued[repeat] == action:
            repeat += 1
        del self._queued[:repeat]
        return action_reply(action, repeat, self._queued_thought or None)

    def _sees_food(self, frame: np.ndarray) -> bool:
        if float(frame[..., :3].mean()) < 8.0:
            return False
        masks = classify_hsv(*hsv(frame))
        return self._pick_target(Camera(frame.shape[0], frame.shape[1]), masks) is not None

    # -- policy on words ---------------------------------------------------------------
    def plan_from_text(self, view: View) -> list[Command]:
        """Decide the commands from a text observation, as ``plan`` does from a frame."""
        if view.dark:
            return [Think("It is dark. I keep going the way I was facing."), Go(5)]
        target = _text_target(view.objects)
        if target is None:
            return self._explore_text(view.objects)
        self._searched_deg = 0
        in_the_way = self._danger_in_the_way(view.objects, target)
        if in_the_way:
            detour = target.bearing - 35.0 * in_the_way
            turn = _turn_command(detour)
            return ([Think(f"A {target.noun} is {target.bearing:+.0f} degrees, "
                           f"{target.distance:g} m away, but danger lies in the way. I step "
                           "around it first.")]
                    + ([turn] if turn else []) + [Go(go_steps_for_distance(2.5))])
        travel = target.distance + self.settings.overshoot_m
        if target.distance > self.settings.far_m:
            travel = target.distance / 2.0
        turn = _turn_command(target.bearing)
        return ([Think(f"A {target.noun} is {target.bearing:+.0f} degrees, {target.distance:g} "
                       "m away. I face it and run through it.")]
                + ([turn] if turn else []) + [Go(go_steps_for_distance(travel))])

    def _danger_in_the_way(self, objects: Sequence[SeenObject], target: SeenObject) -> int:
        """0 if no red ball or zone lies across the path to ``target``, else the side (+1/-1)."""
        for thing in objects:
            if not _dangerous(thing) or thing.nearest >= target.distance:
                continue
            margin = np.degrees(np.arctan2(self.settings.corridor_m + 0.5,
                                           max(thing.nearest, 0.5)))
            if thing.leftmost - margin <= target.bearing <= thing.rightmost + margin:
                return 1 if thing.bearing >= target.bearing else -1
        return 0

    def _explore_text(self, objects: Sequence[SeenObject]) -> list[Command]:
        settings = self.settings
        if self._searched_deg >= 360:
            ahead = [o.nearest for o in objects if o.leftmost - 10 <= 0 <= o.rightmost + 10]
            free = min(ahead, default=40.0)
            if free >= settings.min_free_m:
                self._searched_deg = 0
                steps = min(self._rng.randint(*settings.explore_go),
                            go_steps_for_distance(free - 1.0))
                return [Think(f"No food in sight after a full turn. About {free:.0f} m is "
                              "free ahead, so I move to a new spot."), Go(steps)]
        angle = self._rng.choice(settings.explore_turns)
        self._searched_deg += angle
        return [Think("I see no yellow or green ball. I turn to search."),
                Turn(self._turn_sign * angle)]

    # -- policy ----------------------------------------------------------------------
    def plan(self, frame: np.ndarray) -> list[Command]:
        """Decide the commands for one frame."""
        if float(frame[..., :3].mean()) < 8.0:
            return [Think("It is dark. I keep going the way I was facing."), Go(5)]
        camera = Camera(frame.shape[0], frame.shape[1])
        channels = hsv(frame)
        masks = classify_hsv(*channels)
        target = self._pick_target(camera, masks)
        danger = masks["red"] | masks["orange"]
        if target is None:
            return self._explore(camera, floor_mask(*channels), danger)
        self._searched_deg = 0
        return self._approach(camera, target, danger)

    def _pick_target(self, camera: Camera, masks: dict[str, np.ndarray]) -> Blob | None:
        # Yellow first: touching green ends the level, so it is collected last.
        for kind in ("yellow", "green"):
            blobs = find_blobs(masks[kind], kind, min_area=self.settings.min_ball_area,
                               min_roundness=0.5, min_fill=0.45)
            blobs = [blob for blob in blobs if _plausible_ball(camera, blob)]
            if blobs:
                return blobs[0]
        return None

    def _distance(self, camera: Camera, blob: Blob) -> float:
        on_floor = camera.floor_distance(blob.bottom)
        by_size = camera.focal / max(blob.width, 1)  # assumes a 1 m ball
        return on_floor if on_floor is not None else by_size

    def _approach(self, camera: Camera, target: Blob, danger: np.ndarray) -> list[Command]:
        bearing = camera.bearing(target.center_col)
        distance = self._distance(camera, target)
        blocked_side = self._blocked(camera, danger, target.center_col, distance)
        if blocked_side:
            detour = bearing - 35.0 * blocked_side
            commands: list[Command] = [Think(
                f"A {target.kind} ball is at {bearing:+.0f} degrees, about {distance:.1f} m, "
                f"but something red is in the way. I step around it first.")]
            turn = _turn_command(detour)
            return commands + ([turn] if turn else []) + [Go(go_steps_for_distance(2.5))]
        travel = distance + self.settings.overshoot_m
        if distance > self.settings.far_m:
            travel = distance / 2.0
        commands = [Think(f"A {target.kind} ball is at {bearing:+.0f} degrees, about "
                          f"{distance:.1f} m away. I face it and run through it.")]
        turn = _turn_command(bearing)
        if turn:
            commands.append(turn)
        commands.append(Go(go_steps_for_distance(travel)))
        return commands

    def _blocked(self, camera: Camera, danger: np.ndarray, col: float,
                 distance: float) -> int:
        """0 if the floor path to ``col`` is clear of red, else the side to avoid (+1/-1).

        The straight floor path toward a bearing projects to one image column; a body of
        half-width w at distance z covers w * f / z pixels around it. Every row below the
        target's contact row is checked against that widening corridor.
        """
        if not danger.any():
            return 0
        height, width = danger.shape
        top = int(min(height - 1, camera.row_of_distance(distance + 0.5)))
        rows = np.arange(top, height)
        half = self.settings.corridor_m * (rows + 0.5 - height / 2.0) / camera.eye_m
        cols = np.arange(width)
        corridor = np.abs(cols[None, :] - col) <= half[:, None]
        hits = danger[top:] & corridor
        if hits.sum() < 20:
            return 0
        mean_col = float(np.nonzero(hits)[1].mean())
        return 1 if mean_col >= col else -1

    def _explore(self, camera: Camera, floor: np.ndarray,
                 danger: np.ndarray) -> list[Command]:
        settings = self.settings
        if self._searched_deg >= 360:
            free = self._free_ahead(camera, floor)
            if free >= settings.min_free_m and not self._blocked(
                    camera, danger, camera.width / 2.0, free):
                self._searched_deg = 0
                steps = min(self._rng.randint(*settings.explore_go),
                            go_steps_for_distance(free - 1.0))
                return [Think(f"No food in sight after a full turn. About {free:.0f} m of "
                              f"floor is free ahead, so I move to a new spot."), Go(steps)]
        angle = self._rng.choice(settings.explore_turns)
        self._searched_deg += angle
        return [Think("I see no yellow or green ball. I turn to search."),
                Turn(self._turn_sign * angle)]

    @staticmethod
    def _free_ahead(camera: Camera, floor: np.ndarray) -> float:
        """Metres of floor straight ahead before the first row that is not floor."""
        height, width = floor.shape
        half = max(2, width // 40)
        centre = floor[:, width // 2 - half: width // 2 + half]
        row_is_floor = centre.mean(axis=1) > 0.8
        row = height - 1
        while row > height // 2 and row_is_floor[row]:
            row -= 1
        distance = camera.floor_distance(row + 1)
        return 40.0 if distance is None else min(distance, 40.0)
