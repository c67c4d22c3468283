"""One logged episode as the episode page shows it: turns, path, health curve, arena.

Everything comes from the log (``turns.jsonl``, ``result.json``, the frames) read through the
replay package's loader, plus the arena file placed with the episode's seed for the map. The
arena is optional: when its file cannot be found or differs from the run's, the map shows the
path alone and says why. When the run has been grounded (``python -m llm_aai.grounding``), each
Think is shown with its claims and their verdicts from the run's ``grounding.csv``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from llm_aai.arena.errors import ArenaError, PlacementError
from llm_aai.grounding.ground import GROUNDING_CSV
from llm_aai.grounding.summary import SummaryInputError, claim_rows
from llm_aai.logs.schema import TurnRecord, move_text
from llm_aai.replay.episode import LoggedEpisode, ReplayInputError
from llm_aai.replay.resimulate import verified_arena
from llm_aai.settings import RunConfig, settings_of
from llm_aai.sim.builds import PHYSICS_BUILDS, game_clock, time_limit_steps
from llm_aai.view.layout import Layout, episode_layout
from llm_aai.view.svg import AgentPath, PathPoint

START_HEALTH = 100.0
"""Every Animal-AI episode starts at full health."""
INITIAL_PREAMBLE = "Observation captured."
"""The preamble of ordinary turns; only other preambles (feedback) are worth showing."""


@dataclass(frozen=True)
class ClaimMark:
    """One claim of a Think as ``grounding.csv`` judged it."""

    claim: str
    kind: str
    verdict: str
    truth: str


@dataclass(frozen=True)
class TurnView:
    """What the episode page shows of one turn.

    Attributes:
        record: the logged turn.
        images: the frames it sent, as paths relative to the episode directory.
        thoughts: the ``Think`` texts of a parsed reply, set apart from the moves.
        script: the moves of a parsed reply as a script (``Go(3); Turn(12);``), or None.
        feedback: what the next turn sent back about this reply (the parse error's feedback).
        claims: per thought, its claims' verdicts (empty when the run was not grounded).

    """

    record: TurnRecord
    images: tuple[str, ...]
    thoughts: tuple[str, ...]
    script: str | None
    feedback: str | None
    claims: tuple[tuple[ClaimMark, ...], ...] = ()

    @property
    def marked_thoughts(self) -> list[tuple[str, tuple[ClaimMark, ...]]]:
        """Each thought with its claims (none when not grounded)."""
        claims = self.claims or tuple(() for _ in self.thoughts)
        return list(zip(self.thoughts, claims, strict=True))

    @property
    def number(self) -> int:
        """The turn's number (1 = the first script)."""
        return self.record.turn


@dataclass(frozen=True)
class EpisodeView:
    """An episode ready for its page, its map and the task page's overlay.

    Attributes:
        logged: the episode as loaded from its directory.
        turns: one view per turn from the first script on (the closing turn last).
        path: where the agent started and where each turn ended.
        health: ``(cumulative steps, health, turn)`` from the start on.
        layout: the placed arena, or None with the reason in ``layout_note``.
        layout_note: why there is no arena under the path, or notes from placing it.
        time_limit: the arena's time limit in agent steps, in the run's physics build (its
            ``t`` counts physics steps in a unit that differs by build), or None: no limit,
            or no arena placed.
        physics_build: the build the run played (``llm_aai.sim.builds``).
        grounding_note: why the Thinks carry no verdicts although the run was grounded.

    """

    logged: LoggedEpisode
    turns: tuple[TurnView, ...]
    path: AgentPath
    health: tuple[tuple[int, float, int], ...]
    layout: Layout | None
    layout_note: str = ""
    time_limit: int | None = None
    physics_build: str = PHYSICS_BUILDS[0]
    grounding_note: str = ""

    @property
    def image_count(self) -> int:
        """How many images the agent was sent in the whole episode."""
        return sum(len(turn.images) for turn in self.turns)


def episode_view(logged: LoggedEpisode, arenas_dir: str | Path | None = None) -> EpisodeView:
    """Build the page model of a logged episode; the arena is placed if its file is found."""
    records = list(logged.turns)
    marks, grounding_note = _claim_marks(logged)
    turns = tuple(_turn_view(record, records[i + 1] if i + 1 < len(records) else None, marks)
                  for i, record in enumerate(records))
    layout, note = _layout(logged, arenas_dir)
    # a lone episode (no manifest) is shown in the config's default build
    build = (settings_of(logged.manifest).config.physics_build if logged.manifest
             else RunConfig.physics_build)
    limit = None
    if layout is not None and build in PHYSICS_BUILDS:
        limit = time_limit_steps(layout.time_limit, game_clock(build).steps_per_unit)
    return EpisodeView(logged, turns, _path(logged), _health(logged), layout, note, limit, build,
                       grounding_note)


def _claim_marks(logged: LoggedEpisode) -> tuple[dict[tuple[int, str], list[ClaimMark]], str]:
    """The episode's claims by (turn, Think text), from the run's ``grounding.csv`` if any."""
    path = logged.directory.parent.parent / GROUNDING_CSV
    if not path.is_file():
        return {}, ""
    try:
        rows = claim_rows(path.parent)
    except SummaryInputError as error:
        return {}, f"claims not shown: {error}"
    marks: dict[tuple[int, str], list[ClaimMark]] = {}
    for row in rows:
        if row["episode"] == logged.episode_id:
            marks.setdefault((int(row["turn"]), row["think"]), []).append(
                ClaimMark(row["claim"], row["kind"], row["verdict"], row["truth"]))
    return marks, ""


def _turn_view(record: TurnRecord, following: TurnRecord | None,
               marks: dict[tuple[int, str], list[ClaimMark]] | None = None) -> TurnView:
    thoughts: tuple[str, ...] = ()
    script = None
    if record.commands is not None:
        thoughts = tuple(str(c.get("arg", "")) for c in record.commands if c.get("op") == "Think")
        moves = [move_text(c) for c in record.commands if c.get("op") != "Think"]
        script = "; ".join(moves) + ";" if moves else "(no moves)"
    feedback = None
    if record.parse_error is not None and following is not None and (
            following.sent_preamble and following.sent_preamble != INITIAL_PREAMBLE):
        feedback = following.sent_preamble
    claims = tuple(tuple((marks or {}).get((record.turn, thought), ())) for thought in thoughts)
    return TurnView(record, tuple(record.sent_images), thoughts, script, feedback, claims)


def _path(logged: LoggedEpisode) -> AgentPath:
    """The agent's position and heading at the start (turn 0) and after every turn."""
    records = ([logged.start] if logged.start is not None else []) + list(logged.turns)
    points = []
    for record in records:
        state = record.state or {}
        position, yaw = state.get("position"), state.get("yaw")
        if position is None or yaw is None or len(position) != 3:
            continue
        points.append(PathPoint(record.turn, float(position[0]), float(position[2]),
                                float(yaw)))
    return AgentPath(tuple(points), label=logged.episode_id)


def _health(logged: LoggedEpisode) -> tuple[tuple[int, float, int], ...]:
    """Cumulative steps and health after each turn, turn 0's steps included."""
    records = ([logged.start] if logged.start is not None else []) + list(logged.turns)
    steps, points = 0, [(0, START_HEALTH, 0)]
    for record in records:
        steps += record.steps
        points.append((steps, float(record.health), record.turn))
    return tuple(points)


def _layout(logged: LoggedEpisode, arenas_dir: str | Path | None) -> tuple[Layout | None, str]:
    if logged.seed is None:
        return None, "no seed recorded for this episode, so the arena cannot be placed"
    try:
        path = verified_arena(logged, arenas_dir)
        layout = episode_layout(path, logged.seed)
    except (ReplayInputError, ArenaError, PlacementError, OSError) as error:
        return None, f"arena not drawn: {error}"
    return layout, "; ".join(layout.notes)
