"""Run logs: the versioned records of a run directory, their readers and the crash-safe store.

``schema`` defines the records (``RunManifest``, ``TurnRecord``, ``EpisodeResult``) and their
versions; ``store`` writes a run directory and reads it back (``read_manifest``,
``read_turns``, ``read_result``): every module that reads a run goes through these readers.
``events`` says which event kinds the turn records leave out.
"""

from llm_aai.logs.events import UNLOGGED_EVENTS, logged_events
from llm_aai.logs.schema import (
    MANIFEST_VERSION,
    SCHEMA_VERSION,
    EpisodeResult,
    RunManifest,
    SchemaError,
    TurnRecord,
    Usage,
)
from llm_aai.logs.store import EpisodeWriter, RunStore, read_manifest, read_result, read_turns

__all__ = [
    "MANIFEST_VERSION",
    "SCHEMA_VERSION",
    "UNLOGGED_EVENTS",
    "EpisodeResult",
    "EpisodeWriter",
    "RunManifest",
    "RunStore",
    "SchemaError",
    "TurnRecord",
    "Usage",
    "logged_events",
    "read_manifest",
    "read_result",
    "read_turns",
]
