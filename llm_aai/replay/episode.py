"""Load one logged episode, with whatever of its run is needed to replay or re-simulate it.

Replay works from the log alone (``turns.jsonl`` and the saved frames), so it serves every
agent kind alike. Re-simulation also needs the run's manifest (resolution, backend, protocol,
seeds, arena checksums), which lives two directories up: ``<run>/episodes/<episode-id>/``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from llm_aai.logs.frame_files import FrameOutside, frame_file
from llm_aai.logs.schema import EpisodeResult, RunManifest, SchemaError, TurnRecord
from llm_aai.logs.store import (
    MANIFEST,
    RESULT,
    TURNS,
    CutTurnLine,
    read_manifest,
    read_result,
    read_turns_until_cut,
)

EPISODE_ID = re.compile(
    r"(?P<task>\d{2}-\d{2}-\d{2}(?:-v\d+)?)_t(?P<trial>\d+)(?:\.attempt-\d+)?")
"""An episode directory name: ``<task>_t<trial>``, or ``...attempt-N`` for a set-aside attempt;
a variant's task is ``<task>-v<k>``."""


class ReplayInputError(ValueError):
    """The episode cannot be replayed as asked; the message names the file and what is wrong."""


class ArenaMissingError(ReplayInputError):
    """The episode's arena file is in none of the places looked in (the message names them).

    A whole run's episodes share those places, so a caller going through a run stops at the
    first one rather than looking (and downloading) again for every episode.
    """


@dataclass(frozen=True)
class ShownFrame:
    """One image the agent was shown, in the order shown.

    Attributes:
        turn: the record that sent it (turn ``k``'s images came before script ``k``).
        index: its position among that record's images (0..count-1).
        count: how many images that record sent (3 for the initial observations).
        path: the PNG file.
        record: the turn record that sent it (its reply answers this image).

    """

    turn: int
    index: int
    count: int
    path: Path
    record: TurnRecord


@dataclass(frozen=True)
class LoggedEpisode:
    """An episode as its log recorded it.

    Attributes:
        directory: the episode directory (holds ``turns.jsonl`` and ``frames/``).
        episode_id: the directory name, e.g. ``01-04-03_t1`` (or ``...attempt-1``).
        turns: the turn records from the first script on, in order.
        start: the turn-0 record of the steps before the first script (None in logs written
            before it was recorded).
        result: the sealed result, or None for an unfinished episode.
        manifest: the run's manifest, or None when the episode sits outside a run directory.
        cut: the last line of the log when a kill cut it short (the turns before it are
            replayed), else None.

    """

    directory: Path
    episode_id: str
    turns: tuple[TurnRecord, ...]
    result: EpisodeResult | None
    manifest: RunManifest | None
    start: TurnRecord | None = None
    cut: CutTurnLine | None = None

    @property
    def base_id(self) -> str:
        """The episode id without an ``.attempt-N`` suffix (the key of the manifest's seeds)."""
        return self.episode_id.split(".attempt-")[0]

    @property
    def task_id(self) -> str | None:
        """The testbed task, from the result or else from the directory name."""
        if self.result is not None:
            return self.result.task_id
        match = EPISODE_ID.fullmatch(self.episode_id)
        return match["task"] if match else None

    @property
    def agent(self) -> str:
        """The agent's name as logged (result first, then the manifest), or ``"?"``."""
        if self.result is not None:
            return self.result.agent
        if self.manifest is not None and self.manifest.agent_name is not None:
            return self.manifest.agent_name
        return "?"

    @property
    def seed(self) -> int | None:
        """The episode's reset seed (result first, then the manifest's seed table)."""
        if self.result is not None:
            return self.result.seed
        if self.manifest is not None:
            return self.manifest.episode_seeds.get(self.base_id)
        return None

    def shown_frames(self) -> list[ShownFrame]:
        """Every image the agent was shown, in order (the final frame last).

        Raises:
            ReplayInputError: a turn names a frame outside the episode folder.
        """
        frames = []
        for record in self.turns:
            count = len(record.sent_images)
            for index, relative in enumerate(record.sent_images):
                frames.append(ShownFrame(record.turn, index, count,
                                         self.frame_path(record.turn, relative), record))
        return frames

    def frame_path(self, turn: int, relative: str) -> Path:
        """The file of a frame turn ``turn`` names, checked to lie in this episode's folder.

        Raises:
            ReplayInputError: it does not (``llm_aai.logs.frame_files``); file and turn named.
        """
        try:
            return frame_file(self.directory, relative)
        except FrameOutside as error:
            raise ReplayInputError(f"{self.directory / TURNS}: turn {turn}: {error}") from None


def load_episode(path: str | Path, *, finished_without_replies: bool = False) -> LoggedEpisode:
    """Read an episode directory (and its run's manifest, when it is inside a run).

    ``finished_without_replies`` accepts an episode that ended before its first reply (its
    model unreachable, its first request over the context window): it has a result and no
    turn past the start. The viewer shows such an episode; a replay has nothing to play.

    Raises:
        ReplayInputError: not an episode directory, or a malformed log (file and line named).

    """
    directory = Path(path)
    if not (directory / TURNS).is_file():
        raise ReplayInputError(_not_an_episode(directory))
    try:
        turns, cut = read_turns_until_cut(directory)
        result = read_result(directory) if (directory / RESULT).is_file() else None
    except SchemaError as error:
        raise ReplayInputError(str(error)) from error
    start = next((turn for turn in turns if turn.turn == 0), None)
    turns = tuple(turn for turn in turns if turn.turn != 0)
    if not turns and not (finished_without_replies and result is not None):
        where = cut.message if cut is not None else f"{directory / TURNS}: no turns logged"
        raise ReplayInputError(where)
    return LoggedEpisode(directory, directory.name, turns, result,
                         _manifest(directory.parent.parent), start, cut)


def _manifest(run_dir: Path) -> RunManifest | None:
    if not (run_dir / MANIFEST).is_file():
        return None
    try:
        return read_manifest(run_dir)
    except SchemaError as error:
        raise ReplayInputError(str(error)) from error


def _not_an_episode(directory: Path) -> str:
    """Say what was expected, listing the episodes when a run directory was given instead."""
    message = f"{directory} is not an episode directory (no {TURNS})"
    episodes = sorted(p.parent.name for p in (directory / "episodes").glob(f"*/{TURNS}")) if (
        directory / MANIFEST).is_file() else []
    if episodes:
        shown = ", ".join(episodes[:8])
        more = f" and {len(episodes) - 8} more" if len(episodes) > 8 else ""
        message += f"; this is a run directory, pass one of episodes/{{{shown}}}{more}"
    return message
