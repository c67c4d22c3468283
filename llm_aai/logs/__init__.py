"""Run logs: the versioned schema, the crash-safe store, and which events a turn logs."""

from llm_aai.logs.events import UNLOGGED_EVENTS, logged_events
from llm_aai.logs.schema import (
    SCHEMA_VERSION,
    EpisodeResult,
    SchemaError,
    TurnRecord,
    Usage,
)
from llm_aai.logs.store import EpisodeWriter, RunStore, read_result, read_turns

__all__ = [
    "SCHEMA_VERSION",
    "UNLOGGED_EVENTS",
    "EpisodeResult",
    "EpisodeWriter",
    "RunStore",
    "SchemaError",
    "TurnRecord",
    "Usage",
    "logged_events",
    "read_result",
    "read_turns",
]
