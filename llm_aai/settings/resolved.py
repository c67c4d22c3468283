"""A run as it plays: its config plus what resolving it found, stored once in the manifest.

``start_run`` resolves a ``RunConfig`` (presets applied, tasks selected, prices looked up, a
replayed episode's seed read) into a ``ResolvedRun``, writes it as the manifest's ``run``
record and plays from it. Every reader of a run (resume, analysis, the viewer, re-simulation)
gets it back typed with ``settings_of`` / ``read_settings``, from any manifest version:
version 1 stored the command line (``cli_args``) and version 2 the config twice (``run_config``
as started, ``config`` as resolved); both are converted here, in one place, so no reader
restates a default.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from llm_aai.logs.schema import RunManifest, SchemaError
from llm_aai.logs.store import read_manifest
from llm_aai.protocol import EpisodeProtocol
from llm_aai.settings.config import RunConfig, record_of_cli_args

__all__ = ["ResolvedRun", "episode_seed", "read_settings", "settings_of"]


def episode_seed(run_seed: int, task_id: str, trial: int) -> int:
    """A stable per-episode seed: same run seed, task and trial -> same episode."""
    digest = hashlib.sha256(f"{run_seed}:{task_id}:{trial}".encode()).digest()
    return int.from_bytes(digest[:4], "little")


@dataclass(frozen=True)
class ResolvedRun:
    """A run's settings as it plays them: the manifest's ``run`` record.

    Attributes:
        config: the run's config, with the presets of its prompt applied (the plan prompt's
            one script); resume continues it.
        tasks: the task ids played, in order (with ``variants``, the variants' ids).
        replay_seed: the seed every episode plays with when the run replays one logged
            episode: its scripts mean the same thing only in the world that episode saw.
        price_per_mtok: the model's prices used for its costs (the user's, else litellm's);
            None: unknown, or an agent without tokens.
        cost_known: False for a model without a price: its costs are recorded as 0 but are
            not zero.
        variants: with ``run --variants``, each variant id (a task of this run) -> its parent.
        conversations: with ``--context across-tasks``, each conversation's task order;
            None otherwise.

    """

    config: RunConfig
    tasks: tuple[str, ...]
    replay_seed: int | None = None
    price_per_mtok: tuple[float, float] | None = None
    cost_known: bool = True
    variants: dict[str, str] = field(default_factory=dict)
    conversations: dict[str, tuple[str, ...]] | None = None

    def seed_of(self, task_id: str, trial: int) -> int:
        """The seed of one episode of this run."""
        if self.replay_seed is not None:
            return self.replay_seed
        return episode_seed(self.config.seed, task_id, trial)

    def to_record(self) -> dict[str, Any]:
        """The resolved run as JSON data (paths as text): the manifest's ``run``."""
        record = _RECORD.dump_python(self, mode="json")
        if record["conversations"] is None:
            del record["conversations"]
        return record

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> ResolvedRun:
        """Rebuild a resolved run from ``to_record``'s data.

        Raises:
            SchemaError: an unknown field or a value of the wrong kind, named as
                ``'run.config.trials'``.

        """
        if not isinstance(record, Mapping):
            raise SchemaError("field 'run': expected an object")
        unknown = sorted(set(record) - {f.name for f in dataclasses.fields(cls)})
        if unknown:
            raise SchemaError(f"field 'run.{unknown[0]}': not a setting this llm-aai knows")
        if "tasks" not in record:
            raise SchemaError("missing field 'run.tasks'")
        config = RunConfig.from_record(record.get("config", {}), section="run.config")
        rest = {key: value for key, value in record.items() if key != "config"}
        try:
            resolved = _PARTS.validate_json(json.dumps(rest), strict=True)
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in ("run", *first["loc"]))
            raise SchemaError(f"field {where!r}: {first['msg']}") from None
        return cls(**{f.name: getattr(resolved, f.name) for f in dataclasses.fields(cls)
                      if f.name != "config"}, config=config)


@dataclass(frozen=True)
class _Parts(ResolvedRun):
    """A resolved run's record without its config, which ``RunConfig`` reads (named fields)."""

    config: Any = None
    tasks: tuple[str, ...] = ()


_RECORD = TypeAdapter(ResolvedRun)
_PARTS = TypeAdapter(_Parts)


def settings_of(manifest: RunManifest) -> ResolvedRun:
    """A run's settings from its manifest, whichever version wrote it.

    Raises:
        SchemaError: the recorded settings do not make a run (the field is named).

    """
    if manifest.run is not None:
        return ResolvedRun.from_record(manifest.run)
    old = manifest.config or {}
    if manifest.run_config is not None:
        config = RunConfig.from_record(manifest.run_config)
    elif manifest.cli_args is not None:
        config = RunConfig.from_record(record_of_cli_args(manifest.cli_args),
                                       section="cli_args")
    else:
        raise SchemaError("missing field 'run_config': the manifest does not say how the run "
                          "was started")
    if "protocol" in old:  # as played: the plan prompt's one script applied
        config = dataclasses.replace(config, protocol=_protocol_of(old["protocol"]))
    conversations = old.get("conversations")
    return ResolvedRun(
        config=config,
        tasks=tuple(old.get("tasks", ())),
        replay_seed=old.get("replay_seed"),
        price_per_mtok=tuple(old["price_per_mtok"]) if old.get("price_per_mtok") else None,
        cost_known=bool(old.get("cost_known", True)),  # runs before prices were looked up
        variants=dict(old.get("variants", {})),
        conversations=({name: tuple(tasks) for name, tasks in conversations.items()}
                       if conversations is not None else None),
    )


def read_settings(run_dir: str | Path) -> ResolvedRun:
    """The settings of the run in ``run_dir`` (``read_manifest`` then ``settings_of``).

    Raises:
        FileNotFoundError: not a run directory.
        SchemaError: a malformed manifest (the file and field are named).

    """
    manifest_path = Path(run_dir) / "manifest.json"
    manifest = read_manifest(run_dir)
    try:
        return settings_of(manifest)
    except SchemaError as error:
        raise SchemaError(f"{manifest_path}: {error}") from None


def _protocol_of(record: Mapping[str, Any]) -> EpisodeProtocol:
    try:
        return EpisodeProtocol(**record)
    except (TypeError, ValueError) as error:
        raise SchemaError(f"field 'config.protocol': {error}") from None
