"""Crash-safe reading and writing of a run's results directory.

Durability rule: a crash loses at most the episode in flight. Turns are appended to
``turns.jsonl`` and flushed as they happen; an episode counts as finished only once its
``result.json`` has been written atomically (temp file + ``os.replace``). ``--resume`` therefore
skips episodes with a result and restarts the others from scratch, never duplicating a turn.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import secrets
import shutil
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from filelock import FileLock

from llm_aai.frames import DEFAULT_FRAME_FORMAT, FrameFormat
from llm_aai.logs.schema import (
    CONVERSATION_COLUMNS,
    SUMMARY_COLUMNS,
    UNKNOWN_COST,
    EpisodeResult,
    RunManifest,
    SchemaError,
    TurnRecord,
    charged_cost,
    manifest_from_dict,
    result_from_dict,
    to_dict,
    turn_from_dict,
)

MANIFEST = "manifest.json"
SUMMARY = "summary.csv"
EPISODES = "episodes"
TURNS = "turns.jsonl"
RESULT = "result.json"
RERUN_END_REASONS = frozenset({"infrastructure", "budget"})
"""End reasons that hold no result about the model (an unreachable model, a budget reached):
a resumed run sets such an episode aside as an attempt and plays it again."""
FRAMES = "frames"
LOCK = ".lock"
_TEMPORARY = re.compile(r"\..+\.[0-9a-f]{16}\.tmp")
"""The name ``atomic_path`` gives a file before it replaces the real one (no suffix)."""


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` so that readers see the old file or the new one, never half of it."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` so that readers see the old file or the new one, never half of it.

    A full disk or a kill mid-write leaves the old file, not a truncated one that looks valid.
    """
    with atomic_path(path) as tmp, tmp.open("wb") as handle:
        handle.write(data)


@contextmanager
def atomic_path(path: Path, *, suffix: str = "") -> Iterator[Path]:
    """A temporary file beside ``path`` to write, put in its place when the block ends.

    Readers see the old file or the new one, never half of it: an error or an interrupt in
    the block (Ctrl-C in the middle of an encoder) removes the temporary file and leaves
    ``path`` as it was. For writers that take a path rather than a handle (imageio);
    ``suffix`` ends the temporary name, for writers that choose the format by it (ffmpeg).

    The temporary file is created like any other file (mode 0666 less the umask), so the
    result is as readable as the turn logs beside it; ``tempfile.mkstemp`` would make it
    0600 whatever the umask, and colleagues sharing a cluster could not read results.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp{suffix}")  # _TEMPORARY
    os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    try:
        yield tmp
        with tmp.open("rb") as handle:  # on disk before it takes the real name
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


class EpisodeWriter:
    """Appends one episode's turns and frames; ``finish`` seals it with its result."""

    def __init__(self, directory: Path, frame_format: FrameFormat = DEFAULT_FRAME_FORMAT):
        self.directory = directory
        self.frame_format = frame_format
        (directory / FRAMES).mkdir(parents=True, exist_ok=True)
        self._turns = open(directory / TURNS, "a", encoding="utf-8")  # noqa: SIM115

    def save_frame(self, turn: int, index: int, image: np.ndarray) -> str:
        """Save an RGB frame in the run's format; return its path relative to the episode."""
        relative = f"{FRAMES}/turn-{turn:03d}-{index}{self.frame_format.suffix}"
        (self.directory / relative).write_bytes(self.frame_format.encode(image))
        return relative

    def write_turn(self, record: TurnRecord) -> None:
        """Append a turn and flush it, so a crash right after keeps it."""
        self._turns.write(json.dumps(to_dict(record), separators=(",", ":")) + "\n")
        self._turns.flush()

    def finish(self, result: EpisodeResult) -> None:
        """Mark the episode finished by writing its result atomically.

        The turns reach the disk first: a sealed episode whose turn log a power cut had cut
        short would never be rerun.
        """
        self._turns.flush()
        os.fsync(self._turns.fileno())
        self._turns.close()
        atomic_write_text(self.directory / RESULT, json.dumps(to_dict(result), indent=2))

    def close(self) -> None:
        """Close without finishing (the episode stays unfinished and is rerun on resume)."""
        self._turns.close()


class RunStore:
    """A run directory: the manifest, the episodes and the summary table."""

    def __init__(self, root: Path, frame_format: FrameFormat = DEFAULT_FRAME_FORMAT):
        self.root = Path(root)
        self.frame_format = frame_format

    @property
    def episodes_dir(self) -> Path:
        """Where episode directories live."""
        return self.root / EPISODES

    def write_manifest(self, manifest: RunManifest | Mapping[str, Any]) -> None:
        """Write the run manifest atomically.

        A ``RunManifest`` is what runs write; JSON data (hand-made runs in tests and notebooks,
        partial ones included) is written as given, and ``read_manifest`` judges it when read.
        """
        data = manifest.to_dict() if isinstance(manifest, RunManifest) else dict(manifest)
        atomic_write_text(self.root / MANIFEST, json.dumps(data, indent=2, sort_keys=True))

    def read_manifest(self) -> RunManifest:
        """Read the run's manifest (see ``read_manifest``)."""
        return read_manifest(self.root)

    def finished_results(self) -> dict[str, EpisodeResult]:
        """All sealed episodes by id."""
        results = {}
        if self.episodes_dir.is_dir():
            for result_file in sorted(self.episodes_dir.glob(f"*/{RESULT}")):
                if ".attempt-" in result_file.parent.name:
                    continue  # an infrastructure failure set aside before a retry
                try:
                    result = self._read_sealed(result_file.parent)
                except FileNotFoundError:
                    continue  # a worker set it aside between the listing and the read
                results[result.episode_id] = result
        return results

    def start_episode(self, episode_id: str) -> EpisodeWriter:
        """Open a fresh episode directory, replacing an unfinished earlier attempt.

        Only an attempt that spent nothing is replaced here: the runner sets aside one that
        did first (``set_aside_earlier_attempt``).
        """
        directory = self.episodes_dir / episode_id
        if (directory / RESULT).exists():
            raise FileExistsError(f"episode {episode_id} is already finished in {self.root}")
        if directory.exists():
            shutil.rmtree(directory)
        return EpisodeWriter(directory, self.frame_format)

    def keep_failed_attempt(self, episode_id: str, attempt: int) -> Path:
        """Move an infrastructure-failed attempt aside so its log survives a relaunch.

        Set-aside attempts are never overwritten: attempt numbers continue from the highest
        one on disk (``attempts_set_aside``), across resumed invocations too.
        """
        source = self.episodes_dir / episode_id
        target = self.episodes_dir / f"{episode_id}.attempt-{attempt}"
        if target.exists():
            raise FileExistsError(f"{target} already holds attempt {attempt} of {episode_id}")
        source.rename(target)
        return target

    def attempts_set_aside(self, episode_id: str) -> int:
        """The highest attempt number set aside for an episode (0 if none)."""
        prefix = f"{episode_id}.attempt-"
        numbers = [int(path.name[len(prefix):]) for path in self.episodes_dir.glob(f"{prefix}*")
                   if path.name[len(prefix):].isdigit()]
        return max(numbers, default=0)

    def spent(self) -> tuple[int, float]:
        """Tokens and dollars of every attempt in the run: sealed, set aside or interrupted.

        What a budget counts: a resumed run continues from what earlier invocations spent. A
        sealed attempt counts its result (with the estimates charged for calls sent without a
        usable reply: ``charged_cost``); one without a result (interrupted before it was
        sealed, or its result damaged and renamed) counts the calls its turn log records, so
        a run stopped and resumed again and again cannot spend past its budget.

        Raises:
            SchemaError: a turn log of an attempt without a result is damaged before its last
                line (what it spent cannot be known); the message names the file and line.

        """
        tokens, cost = 0, 0.0
        if self.episodes_dir.is_dir():
            for directory in sorted(p for p in self.episodes_dir.iterdir() if p.is_dir()):
                if (directory / RESULT).is_file():
                    result = self._read_sealed(directory)
                    spent = (result.input_tokens + result.output_tokens,
                             charged_cost(result))  # an unknown cost cannot be counted
                else:
                    spent = _spending(directory)
                tokens += spent[0]
                cost += spent[1]
        return tokens, cost

    def lock(self) -> FileLock:
        """An exclusive lock on the run, held while one process writes it.

        Two processes resuming the same run would each restart the other's episode in flight
        (and pay the model twice); the second is refused instead. ``filelock`` releases the
        lock when the process dies, so a killed run can be resumed at once. Any thread may
        release it (not only the one that took it): a driver that opens a run in a worker
        thread closes it from its event loop.
        """
        self.root.mkdir(parents=True, exist_ok=True)
        return FileLock(self.root / LOCK, timeout=0, thread_local=False)

    def remove_stale_temporaries(self) -> list[Path]:
        """Delete the temporary files a killed writer left (``.summary.csv.<hex>.tmp``...).

        ``atomic_write_text`` removes its temporary file on any error, but a kill -9 between
        its creation and the rename leaves it. Called under the run's lock, when no writer of
        this run is alive, so every one found is stale.

        Returns:
            The files removed.

        """
        folders = [self.root]
        if self.episodes_dir.is_dir():
            folders += [path for path in self.episodes_dir.iterdir()
                        if path.is_dir() and not path.is_symlink()]
        removed = []
        for folder in folders:
            for path in folder.iterdir():
                if _TEMPORARY.fullmatch(path.name) and path.is_file() and not path.is_symlink():
                    path.unlink()
                    removed.append(path)
        return removed

    def set_aside_earlier_attempt(self, episode_id: str) -> int:
        """Move an episode's earlier attempt aside before it is played again, if it must stay.

        An infrastructure failure stays with its result, and an attempt interrupted before it
        was sealed (Ctrl-C, SIGTERM, a crash) stays if its turns spent anything: what it paid
        for counts in the run's budget (``spent``) on every later invocation. Each becomes its
        own last attempt (nothing is deleted); an interrupted attempt that made no model call
        is left for ``start_episode`` to replace. Returns the number of the last attempt set
        aside, so the next one continues the count.
        """
        directory = self.episodes_dir / episode_id
        if not (directory / RESULT).exists():
            if directory.is_dir() and _spending(directory) != (0, 0.0):
                attempt = self.attempts_set_aside(episode_id) + 1
                self.keep_failed_attempt(episode_id, attempt)
                return attempt
            return self.attempts_set_aside(episode_id)
        result = self._read_sealed(directory)
        if result.end_reason not in RERUN_END_REASONS:
            raise FileExistsError(f"episode {episode_id} is already finished in {self.root}")
        attempt = max(result.attempts, self.attempts_set_aside(episode_id) + 1)
        self.keep_failed_attempt(episode_id, attempt)
        return attempt

    def set_aside_interrupted_replies(self, episode_id: str) -> int | None:
        """Set an unfinished attempt with any reply aside, whatever it spent; its number.

        ``set_aside_earlier_attempt`` keeps an interrupted attempt only if it spent tokens or
        dollars, a model's cost. A person's replies spend neither, yet are the study's data:
        a driver whose agent is a person (the browser's sessions) calls this first, so a
        level abandoned and played again keeps its earlier replies as ``<id>.attempt-N``.
        None: nothing to keep (no folder, a sealed one, or no reply in it).
        """
        directory = self.episodes_dir / episode_id
        if (directory / RESULT).exists() or not (directory / TURNS).is_file():
            return None
        turns, _ = read_turns_until_cut(directory)
        if not any(turn.reply for turn in turns):
            return None
        attempt = self.attempts_set_aside(episode_id) + 1
        self.keep_failed_attempt(episode_id, attempt)
        return attempt

    def _read_sealed(self, directory: Path) -> EpisodeResult:
        """An episode folder's result, which must be the result of that episode.

        Raises:
            SchemaError: the result cannot be read, or names another episode (a folder copied
                or renamed by hand), which would otherwise count twice and never be played.

        """
        result = read_result(directory)
        folder = directory.name.partition(".attempt-")[0]
        if result.episode_id != folder:
            raise SchemaError(f"{directory / RESULT}: holds the result of episode "
                              f"{result.episode_id!r}, not of {folder!r} whose folder it is in")
        return result

    def check_episode_folders(self) -> None:
        """Refuse an ``episodes`` folder holding what no run writes there.

        An entry that is a file or a symbolic link is not an episode folder: the run could
        neither replace it (an unfinished episode is rewritten from scratch) nor read it, and
        deleting what someone put there is not the run's to decide.

        Raises:
            SchemaError: naming the first such entry.

        """
        if self.episodes_dir.is_symlink() or (self.episodes_dir.exists()
                                               and not self.episodes_dir.is_dir()):
            raise SchemaError(f"{self.episodes_dir} is not a folder the run wrote (a file or a "
                              "symbolic link): move it away and resume")
        if not self.episodes_dir.is_dir():
            return
        for path in sorted(self.episodes_dir.iterdir()):
            kind = ("a symbolic link" if path.is_symlink()
                    else None if path.is_dir() else "a file")
            if kind is not None:
                raise SchemaError(f"{path} is {kind}, not an episode folder: move it out of "
                                  f"{self.episodes_dir} and resume")

    def set_aside_unreadable_results(self) -> list[str]:
        """Move aside every episode whose result.json cannot be read, so that it is played again.

        A result file damaged on disk (a full disk, a hand edit, a copy cut short, a folder in
        its place, another episode's result) would otherwise stop every resume. Nothing is
        deleted: the episode directory becomes its own last attempt (``<id>.attempt-N``, as an
        infrastructure failure set aside) with the damaged file renamed
        ``result.json.corrupt``, where no reader takes it for a result. In an attempt already
        set aside the file is renamed where it is. Either way what it cost is then counted
        from its turn log (``spent``).

        Returns:
            One line per file set aside, naming it and what is wrong with it.

        """
        notes = []
        if not self.episodes_dir.is_dir():
            return notes
        for result_file in sorted(self.episodes_dir.glob(f"*/{RESULT}")):
            directory = result_file.parent
            try:
                self._read_sealed(directory)
            except SchemaError as error:
                if ".attempt-" in directory.name:
                    result_file.rename(directory / f"{RESULT}.corrupt")
                    notes.append(f"{error}; renamed {RESULT}.corrupt (an attempt already set "
                                 "aside: its cost is counted from its turns)")
                    continue
                # The folder first: stopped between the two renames, the run holds an attempt
                # set aside whose result the next resume renames in place. The other way round
                # it held an episode folder without a result, which a resume takes for an
                # interrupted episode and deletes if it called no model, damaged file and all.
                attempt = self.attempts_set_aside(directory.name) + 1
                target = self.keep_failed_attempt(directory.name, attempt)
                (target / RESULT).rename(target / f"{RESULT}.corrupt")
                notes.append(f"{error}; set aside as {target} (its {RESULT} renamed "
                             f"{RESULT}.corrupt) and played again")
        return notes

    def write_summary(self) -> Path:
        """Rewrite summary.csv from the sealed episodes (atomic; rows sorted by episode id).

        An episode without a known cost has ``unknown`` in ``cost_usd``, not an empty cell
        that a spreadsheet would add up as 0. A run across tasks adds each episode's
        conversation and position as the last columns.
        """
        results = sorted(self.finished_results().items())
        columns = SUMMARY_COLUMNS
        if any(result.conversation is not None for _, result in results):
            columns = (*SUMMARY_COLUMNS, *CONVERSATION_COLUMNS)
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=columns)
        writer.writeheader()
        for _, result in results:
            row = to_dict(result)
            if row["cost_usd"] is None:
                row["cost_usd"] = UNKNOWN_COST
            writer.writerow(row)
        path = self.root / SUMMARY
        atomic_write_text(path, buffer.getvalue())
        return path


def read_manifest(run_dir: Path) -> RunManifest:
    """Read a run's ``manifest.json``: the one reader of manifests, old and new.

    Raises:
        FileNotFoundError: ``run_dir`` holds no manifest (it is not a run directory).
        SchemaError: the file is not JSON, or a field is missing or of the wrong kind; the
            message names the file and the field.

    """
    path = Path(run_dir) / MANIFEST
    if not path.is_file():
        raise FileNotFoundError(f"{run_dir} is not an llm-aai run directory (no {MANIFEST})")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        raise SchemaError(f"{path}: unreadable manifest: {_why(error)}") from error
    try:
        return manifest_from_dict(data)
    except SchemaError as error:
        raise SchemaError(f"{path}: {error}") from error


def read_turns(episode_dir: Path) -> list[TurnRecord]:
    """Read an episode's turns, naming the file and line of any malformed record."""
    turns, cut = _read_turn_lines(Path(episode_dir) / TURNS)
    if cut is not None:
        raise SchemaError(cut.message)
    return turns


@dataclass(frozen=True)
class CutTurnLine:
    """The last line of a turn log, cut short by a kill while it was being written.

    Attributes:
        path: the turn log.
        line: its 1-based line number.
        last_intact_turn: the number of the last turn read whole before it (None: none).
        error: why the cut line cannot be read.

    """

    path: Path
    line: int
    last_intact_turn: int | None
    error: str

    @property
    def message(self) -> str:
        """Where the log ends, as a replay tells it."""
        intact = ("no turn before it is intact" if self.last_intact_turn is None
                  else f"it is intact up to turn {self.last_intact_turn}")
        return (f"{self.path}:{self.line}: the log ends in a cut line ({self.error}), as a "
                f"run killed while writing it leaves it; {intact}")


def read_turns_until_cut(episode_dir: Path) -> tuple[list[TurnRecord], CutTurnLine | None]:
    """Read an episode's turns, accepting a last line that a kill cut short.

    The writer ends every record with a newline, so only an unterminated last line can be a
    cut one; a malformed line anywhere else is still an error.

    Returns:
        The intact turns, and the cut line (None when the log is whole).

    Raises:
        SchemaError: a malformed record that is not a cut last line.

    """
    return _read_turn_lines(Path(episode_dir) / TURNS)


def _read_turn_lines(path: Path) -> tuple[list[TurnRecord], CutTurnLine | None]:
    raw_lines = path.read_bytes().split(b"\n")  # the last entry is b"" for a whole log
    turns = []
    for line_number, raw in enumerate(raw_lines, start=1):
        if not raw.strip():
            continue
        try:
            turns.append(turn_from_dict(json.loads(raw.decode("utf-8"))))
        except (UnicodeDecodeError, json.JSONDecodeError, TypeError, SchemaError,
                RecursionError) as error:
            if line_number == len(raw_lines):  # no newline after it: the write was cut
                last = turns[-1].turn if turns else None
                return turns, CutTurnLine(path, line_number, last, _short(error))
            raise SchemaError(f"{path}:{line_number}: {_why(error)}") from error
    return turns, None


def _spending(episode_dir: Path) -> tuple[int, float]:
    """Tokens and known dollars of the model calls an episode folder's turn log records.

    A last line cut by a kill is left out: its call's cost is then not counted, the one
    record a kill can lose.
    """
    if not (episode_dir / TURNS).is_file():
        return 0, 0.0
    turns, _ = read_turns_until_cut(episode_dir)
    return (sum(t.usage.input_tokens + t.usage.output_tokens for t in turns),
            sum(charged_cost(t.usage) for t in turns))


def _short(error: Exception) -> str:
    return " ".join(str(error).split())[:120]


def read_result(episode_dir: Path) -> EpisodeResult:
    """Read a sealed episode's result.

    Raises:
        FileNotFoundError: there is none.
        SchemaError: it cannot be read (bad JSON or UTF-8, JSON nested too deep, a folder in
            its place) or a field is wrong; the message names the file.

    """
    path = Path(episode_dir) / RESULT
    if path.is_dir():
        raise SchemaError(f"{path}: a folder, not a result file")
    try:
        return result_from_dict(json.loads(path.read_text(encoding="utf-8")))
    except (ValueError, TypeError, RecursionError) as error:  # SchemaError: bad fields
        raise SchemaError(f"{path}: {_why(error)}") from error


def _why(error: Exception) -> str:
    """An error's text; a RecursionError's own says nothing about the file."""
    if isinstance(error, RecursionError):
        return "JSON nested too deep to read"
    return str(error)
