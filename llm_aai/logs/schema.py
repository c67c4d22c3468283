"""The versioned record types of a run's results directory.

Layout (``SCHEMA_VERSION`` 1)::

    results/<run-id>/
      manifest.json                 config, versions, git revision, seeds, model, prompt hash
      summary.csv                   one row per finished episode (EpisodeResult fields)
      episodes/<episode-id>/
        turns.jsonl                 one TurnRecord per line: turn 0 = the steps before the
                                    first script (the images they show go out with turn 1)
        result.json                 the EpisodeResult; its presence marks the episode finished
        frames/turn-NNN-K.jpg       every image sent to the agent, byte for byte (.png with
                                    --frames png; see llm_aai.frames)
      episodes/<episode-id>.attempt-N/   an earlier attempt that failed for infrastructure reasons

Each turn record holds only what was *new* that turn (the text and images sent, the reply), so
the full conversation can be rebuilt by concatenating turns after the manifest's system prompt.
Records are plain dataclasses serialised to JSON; ``from_dict`` rejects unknown schema versions
rather than guessing.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

SCHEMA_VERSION = 1


class SchemaError(ValueError):
    """A log file was written by an incompatible version or is malformed."""


@dataclass(frozen=True)
class Usage:
    """What one model call cost; zeros for built-in agents."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0
    retries: int = 0


@dataclass(frozen=True)
class TurnRecord:
    """One turn of an episode: what the agent was sent, what it replied, what happened.

    Attributes:
        turn: 0 for the no-op steps before the first script (after reset and between the
            initial observations; it sends nothing, so its reward and health complete the
            episode's totals), then 1.. for each script.
        sent_preamble: user text sent before the images (feedback, "Observation captured.").
        sent_images: frame paths relative to the episode directory, in the order sent.
        sent_text: user text sent after the images (the health).
        reply: the agent's raw reply (None for turn 0 and for the closing turn).
        commands: the parsed script as ``[{"op": "Go", "arg": 3}, ...]``; None if unparsed.
        parse_error: the feedback given when the reply was not a valid script.
        normalizations: what was changed before the reply was kept and parsed: characters the
            model client replaced (a lone surrogate), then the script's own normalisations.
        actions: the ``[move, turn]`` frame actions executed, for exact replay.
        steps: AAI steps executed this turn.
        health: health after the turn.
        reward: reward gained during the turn.
        events: reward events (``{"kind", "reward", "step"}``) during the turn.
        terminated / truncated: the gymnasium flags after the turn.
        usage: tokens, cost, latency and retries of the call that produced ``reply``.
        state: agent position/yaw after the turn (embedded backend), for analysis and replay.
    """

    turn: int
    sent_text: str
    sent_preamble: str = ""
    sent_images: tuple[str, ...] = ()
    reply: str | None = None
    commands: tuple[dict[str, Any], ...] | None = None
    parse_error: str | None = None
    normalizations: tuple[str, ...] = ()
    actions: tuple[tuple[int, int], ...] = ()
    steps: int = 0
    health: float = 100.0
    reward: float = 0.0
    events: tuple[dict[str, Any], ...] = ()
    terminated: bool = False
    truncated: bool = False
    usage: Usage = field(default_factory=Usage)
    state: dict[str, Any] | None = None
    schema: int = SCHEMA_VERSION


@dataclass(frozen=True)
class EpisodeResult:
    """The outcome of one episode; one row of ``summary.csv``.

    ``passed`` is ``reward >= pass_mark`` (AAI's rule, read from the arena's ``pass_mark``),
    and is always False for infrastructure failures, which are reported separately.
    """

    episode_id: str
    task_id: str
    level: int
    trial: int
    seed: int
    agent: str
    passed: bool
    reward: float
    pass_mark: float
    final_health: float
    scripts_used: int
    invalid_replies: int
    end_reason: str
    steps: int
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    duration_s: float = 0.0
    attempts: int = 1
    infra_error: str | None = None
    schema: int = SCHEMA_VERSION


SUMMARY_COLUMNS = tuple(f.name for f in dataclasses.fields(EpisodeResult))


def to_dict(record: Any) -> dict[str, Any]:
    """Serialise a record to JSON-ready data: nested records become dicts.

    Tuples are kept as they are (``json`` writes them as lists). Not ``dataclasses.asdict``:
    it deep-copies every element, and a run-out turn carries thousands of actions.
    """
    return {f.name: _plain(getattr(record, f.name)) for f in dataclasses.fields(record)}


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_dict(value)
    return value


def turn_from_dict(data: dict[str, Any]) -> TurnRecord:
    """Rebuild a TurnRecord, refusing records from another schema version."""
    _check_schema(data)
    data = dict(data)
    data["usage"] = Usage(**_require_object(data.get("usage", {}), "usage"))
    for key in ("sent_images", "normalizations", "events"):
        data[key] = tuple(data.get(key, ()))
    data["actions"] = tuple(tuple(a) for a in data.get("actions", ()))
    if data.get("commands") is not None:
        data["commands"] = tuple(data["commands"])
    return TurnRecord(**data)


def result_from_dict(data: dict[str, Any]) -> EpisodeResult:
    """Rebuild an EpisodeResult, refusing records from another schema version."""
    _check_schema(data)
    return EpisodeResult(**data)


def _check_schema(data: Any) -> None:
    _require_object(data, "log record")
    version = data.get("schema")
    if version != SCHEMA_VERSION:
        raise SchemaError(f"log record has schema {version!r}; this llm-aai reads {SCHEMA_VERSION}")


_JSON_KINDS = {list: "an array", str: "a string", bool: "a boolean", int: "a number",
               float: "a number", type(None): "null"}


def _require_object(value: Any, what: str) -> dict[str, Any]:
    """Return ``value`` if it is a JSON object, else raise a SchemaError naming what it is.

    Valid JSON that is not an object (a line ``[1, 2]``, a file ``null``) would otherwise fail
    deep inside the record constructor with an AttributeError or TypeError that names neither
    the problem nor, once the reader adds it, the place.
    """
    if not isinstance(value, dict):
        kind = _JSON_KINDS.get(type(value), type(value).__name__)
        raise SchemaError(f"{what}: expected a JSON object, got {kind}")
    return value
