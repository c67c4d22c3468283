"""Run logs: the versioned schema and the crash-safe store."""

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
    "EpisodeResult",
    "EpisodeWriter",
    "RunStore",
    "SchemaError",
    "TurnRecord",
    "Usage",
    "read_result",
    "read_turns",
]
