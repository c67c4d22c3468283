"""Ground a whole run: every Think's claims judged against its re-simulated turn.

Each sealed episode of the run is re-simulated (``llm_aai.replay.resimulate``, which must find a
MATCH, else the truth would be of another episode) with ``scene.probe`` taken at the instant of
every script turn's observation; health and reward events come from the turn records that the
re-simulation has just checked. Nothing of the state is stored twice: ``grounding.csv`` holds
claims and verdicts, and the truth in words for a reader.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from llm_aai.grounding.claims import Claim
from llm_aai.grounding.extract import extract
from llm_aai.grounding.scene import probe
from llm_aai.grounding.verify import TurnTruth, verify
from llm_aai.logs.schema import TurnRecord
from llm_aai.replay import (
    ArenaMissingError,
    LoggedEpisode,
    ReplayInputError,
    load_episode,
    resimulate,
)

GROUNDING_CSV = "grounding.csv"
EPISODES_CSV = "grounding_episodes.csv"
COLUMNS: tuple[str, ...] = ("episode", "task", "level", "agent", "passed", "turn", "think",
                            "claim", "kind", "subject", "verdict", "truth")
EPISODE_COLUMNS: tuple[str, ...] = ("episode", "task", "level", "agent", "passed", "failure",
                                    "first_false_turn", "first_false_claim")
PERCEPTION_KINDS = frozenset({"seen", "not_seen", "bearing", "distance"})
NUMERIC_KINDS = frozenset({"health_trend", "health_comparison", "reward"})

Extractor = Callable[[str], list[Claim]]
"""Think text -> claims (``extract.extract``, or an LLM's split from ``llm_extract``)."""


class GroundingError(ValueError):
    """A run or episode cannot be grounded; the message names the file and the reason."""


@dataclass(frozen=True)
class GroundedClaim:
    """One row of ``grounding.csv``."""

    episode: str
    task: str
    level: int
    agent: str
    passed: bool
    turn: int
    think: str
    claim: Claim
    verdict: str
    truth: str

    def row(self) -> dict[str, str]:
        """The CSV row."""
        return {"episode": self.episode, "task": self.task, "level": str(self.level),
                "agent": self.agent, "passed": str(self.passed).lower(),
                "turn": str(self.turn), "think": self.think, "claim": self.claim.span,
                "kind": self.claim.kind, "subject": _subject(self.claim),
                "verdict": self.verdict, "truth": self.truth}


@dataclass(frozen=True)
class EpisodeGrounding:
    """An episode's claims and its failure class."""

    episode: LoggedEpisode
    claims: tuple[GroundedClaim, ...]

    @property
    def failure(self) -> str:
        """``passed``, or why it failed.

        ``perception``: a false claim about what is seen; ``numeric``: no false perception
        claim, but a false health or reward claim; ``other``: no false claim found.
        """
        result = self.episode.result
        if result is not None and result.passed:
            return "passed"
        false = [c for c in self.claims if c.verdict == "false"]
        if any(c.claim.kind in PERCEPTION_KINDS for c in false):
            return "perception"
        if false:
            return "numeric"
        return "other"

    def row(self) -> dict[str, str]:
        """The ``grounding_episodes.csv`` row."""
        result = self.episode.result
        false = next((c for c in self.claims if c.verdict == "false"), None)
        return {"episode": self.episode.episode_id, "task": result.task_id,
                "level": str(result.level), "agent": result.agent,
                "passed": str(result.passed).lower(), "failure": self.failure,
                "first_false_turn": "" if false is None else str(false.turn),
                "first_false_claim": "" if false is None else false.claim.span}


def _subject(claim: Claim) -> str:
    if claim.kind in ("health_trend", "health_comparison"):
        return "health"
    if claim.kind == "reward" and claim.type is None and claim.colour is None:
        return "any ball"
    return claim.subject


def thinks(record: TurnRecord) -> list[str]:
    """The Think texts of a turn's parsed script (none for an unparsed reply)."""
    return [str(c.get("arg", "")) for c in record.commands or () if c.get("op") == "Think"]


def ground_episode(episode: LoggedEpisode, *, extractor: Extractor = extract,
                   arenas_dir: str | Path | None = None) -> EpisodeGrounding:
    """Re-simulate one sealed episode and judge every claim of its Thinks.

    Raises:
        GroundingError: the episode is unfinished or does not re-simulate to a MATCH.
        ArenaMissingError: its arena file is nowhere to be found (the places named).
    """
    result = episode.result
    if result is None:
        raise GroundingError(f"{episode.directory}: unfinished episode (no result.json)")
    try:
        report = resimulate(episode, arenas_dir=arenas_dir, probe=probe)
    except ArenaMissingError:
        raise
    except ReplayInputError as error:
        raise GroundingError(str(error)) from error
    if not report.ok:
        raise GroundingError(f"{episode.directory}: {report.verdict()}")
    rows = []
    for index, record in enumerate(episode.turns):
        if record.reply is None:
            continue
        truth = _truth(episode, index, report.probes.get(record.turn))
        for think in thinks(record):
            for claim in extractor(think):
                judged = verify(claim, truth)
                rows.append(GroundedClaim(episode.episode_id, result.task_id, result.level,
                                          result.agent, result.passed, record.turn, think,
                                          claim, judged.verdict, judged.truth))
    return EpisodeGrounding(episode, tuple(rows))


def _truth(episode: LoggedEpisode, index: int, scene) -> TurnTruth:
    """Health told now and before, and the events of the turn just played."""
    start, turns = episode.start, episode.turns

    def told(i: int) -> float | None:
        if i < 0:
            return None
        if i == 0:
            return None if start is None else start.health_told
        return turns[i - 1].health

    events = (() if start is None else start.events) if index == 0 else turns[index - 1].events
    return TurnTruth(scene, told(index), told(index - 1), tuple(events))


def episode_dirs(run_dir: Path) -> list[Path]:
    """The sealed episodes of a run, in name order."""
    return sorted(p.parent for p in (run_dir / "episodes").glob("*/result.json"))


def ground_run(run_dir: str | Path, *, extractor: Extractor = extract,
               arenas_dir: str | Path | None = None,
               on_error: Callable[[str], None] | None = None) -> list[EpisodeGrounding]:
    """Ground every sealed episode of a run and write ``grounding.csv`` and the episodes' CSV.

    Args:
        run_dir: the run directory (holds ``manifest.json`` and ``episodes/``).
        extractor: how Thinks become claims.
        arenas_dir: where to find the arenas (see ``llm_aai.replay.verified_arena``).
        on_error: told each episode that could not be grounded (its rows are left out);
            None raises instead.

    Raises:
        GroundingError: not a run directory, an arena file not found (at the first episode
            that needs it, whatever ``on_error``: nothing is written), or (without
            ``on_error``) an episode fails.
    """
    run = Path(run_dir)
    if not (run / "manifest.json").is_file():
        raise GroundingError(f"{run}: not a run directory (no manifest.json)")
    grounded = []
    for directory in episode_dirs(run):
        try:
            grounded.append(ground_episode(load_episode(directory), extractor=extractor,
                                           arenas_dir=arenas_dir))
        except ArenaMissingError as error:  # the next episodes would look in the same places
            raise GroundingError(f"{error} (nothing grounded or written)") from error
        except (GroundingError, ReplayInputError) as error:
            if on_error is None:
                raise GroundingError(str(error)) from error
            on_error(str(error))
    _write(run / GROUNDING_CSV, COLUMNS, (c.row() for g in grounded for c in g.claims))
    _write(run / EPISODES_CSV, EPISODE_COLUMNS, (g.row() for g in grounded))
    return grounded


def _write(path: Path, columns: Sequence[str], rows: Iterator[dict[str, str]]) -> None:
    """Write through a temporary file, so a crash never leaves half a table."""
    partial = path.with_suffix(".csv.partial")
    with partial.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(columns))
        writer.writeheader()
        writer.writerows(rows)
    partial.replace(path)
