"""The versioned record types of a run's results directory: manifest, turns, results.

Layout (``SCHEMA_VERSION`` 1)::

    results/<run-id>/
      manifest.json                 the RunManifest: settings, versions, git revision, seeds,
                                    model, prompt hash, arena checksums
      summary.csv                   one row per finished episode (EpisodeResult fields)
      episodes/<episode-id>/
        turns.jsonl                 one TurnRecord per line: turn 0 = the steps before the
                                    first script (the images they show go out with turn 1)
        result.json                 the EpisodeResult; its presence marks the episode finished
        frames/turn-NNN-K.jpg       every image sent to the agent, byte for byte (.png with
                                    --frames png; see llm_aai.frames)
      episodes/<episode-id>.attempt-N/   an earlier attempt set aside: an infrastructure
                                    failure, or one stopped after it called the model

Each turn record holds only what was *new* that turn (the text and images sent, the reply), so
the full conversation can be rebuilt by concatenating turns after the manifest's system prompt.
Records are plain dataclasses serialised to JSON; ``from_dict`` rejects unknown schema versions
rather than guessing. The manifest has its own version (``MANIFEST_VERSION``), since its shape
changes independently of the turn and result records: version 1 stored the command line that
started the run (``cli_args``), version 2 the run's settings twice (``run_config`` as started,
``config`` as resolved), version 3 once (``run``: the resolved run of
``llm_aai.settings.ResolvedRun``). ``manifest_from_dict`` reads all three; the settings inside
are read typed by ``llm_aai.settings.settings_of``, the one reader of every version's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

SCHEMA_VERSION = 1
MANIFEST_VERSION = 3
_OMITTED_WHEN_NONE = "omitted_when_none"
"""Field metadata: ``to_dict`` leaves the field out while it is None (a field added for a mode,
so records of the other modes are written exactly as before)."""


class SchemaError(ValueError):
    """A log file was written by an incompatible version or is malformed."""


@dataclass(frozen=True)
class Usage:
    """What one model call cost; zeros for built-in agents.

    ``cost_usd`` is None when the model has no known price: the call cost something, but not
    a known amount (never logged as 0).
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = 0.0
    latency_s: float = 0.0
    retries: int = 0
    unanswered_cost_usd: float | None = field(default=None, metadata={_OMITTED_WHEN_NONE: True})
    """What the budget charged for tries of this call that were sent and got no usable reply
    (timed out; no choice in the reply), and for a reply whose usage was impossible
    (``llm_aai.llm.usage``), which a provider may bill though no usage says so:
    an estimate (the call's reservation: ``llm_aai.runner.budget``), not a measured cost, so
    apart from ``cost_usd``. None when there was none, or no budget to charge it."""


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
        health_told: turn 0 only: the health the first message tells the model. The paper's
            harness states the health at the first initial observation, although the no-op
            steps that follow it lower it further, so this differs from turn 0's ``health``
            (after all of its steps); the protocol keeps the paper's behaviour and the log
            records both. None on every other turn, whose message states the ``health`` of
            the turn before it.
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
    health_told: float | None = None
    reward: float = 0.0
    events: tuple[dict[str, Any], ...] = ()
    terminated: bool = False
    truncated: bool = False
    usage: Usage = field(default_factory=Usage)
    state: dict[str, Any] | None = None
    schema: int = SCHEMA_VERSION
    finish_reason: str | None = field(default=None, metadata={_OMITTED_WHEN_NONE: True})
    """Why the model's reply ended, as its server said ("stop"; "length" for a reply cut at
    ``--max-tokens``); None where no server said (the built-in agents, older logs)."""


@dataclass(frozen=True)
class EpisodeResult:
    """The outcome of one episode; one row of ``summary.csv``.

    ``passed`` is ``reward >= pass_mark`` (AAI's rule, read from the arena's ``pass_mark``),
    and is always False for infrastructure failures, which are reported separately.
    ``cost_usd`` is None when a call of the episode had no known price (``summary.csv`` then
    says ``unknown``): an unknown cost is never summed as 0.

    With ``--context across-tasks`` the episode is one task of a conversation:
    ``conversation`` names it (``trial-1``) and ``position`` is the task's place in it
    (1 for the first); both are None for the paper's one conversation per task, and are then
    left out of ``result.json`` and ``summary.csv``, which stay as they were before the mode.
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
    cost_usd: float | None = 0.0
    duration_s: float = 0.0
    attempts: int = 1
    infra_error: str | None = None
    schema: int = SCHEMA_VERSION
    conversation: str | None = field(default=None, metadata={_OMITTED_WHEN_NONE: True})
    position: int | None = field(default=None, metadata={_OMITTED_WHEN_NONE: True})
    parent_task: str | None = field(default=None, metadata={_OMITTED_WHEN_NONE: True})
    """For a variant (``run --variants``; ``task_id`` is then the variant's id): its testbed
    task. None for a testbed task."""
    node_id: str | None = field(default=None, metadata={_OMITTED_WHEN_NONE: True})
    """Where the episode was played: Ray's node id with ``--executor ray``, ``local`` on this
    machine; None in results written before it was recorded."""
    host: str | None = field(default=None, metadata={_OMITTED_WHEN_NONE: True})
    """The machine's host name (None in results written before it was recorded)."""
    unanswered_cost_usd: float | None = field(default=None, metadata={_OMITTED_WHEN_NONE: True})
    """What the budget charged for the episode's model calls that were sent and got no usable
    reply (timed out) or with usage that could not be believed, the one that ended it
    included: an estimate, not a measured cost, and
    not part of ``cost_usd`` (``Usage.unanswered_cost_usd``). None when there was none."""


CONTEXT_OVERFLOW = "context_overflow"
"""The end reason of an episode whose conversation outgrew the model's context window: a
limit of the server's setup, not a reply of the model, so analysis counts it apart."""


CONVERSATION_COLUMNS = ("conversation", "position")
"""The result's fields that only runs across tasks write (``summary.csv`` gains them there)."""
SUMMARY_COLUMNS = tuple(f.name for f in dataclasses.fields(EpisodeResult)
                        if f.name not in CONVERSATION_COLUMNS)
"""The columns of every run's ``summary.csv``."""
UNKNOWN_COST = "unknown"
"""What ``summary.csv`` says in ``cost_usd`` for an episode whose cost is not known."""


def known_cost(cost_usd: float | None) -> float:
    """A logged cost as a number to add up: an unknown one (None) adds nothing it can count."""
    return 0.0 if cost_usd is None else cost_usd


def charged_cost(record: Usage | EpisodeResult) -> float:
    """What a budget counts for a call or an episode: its known cost and its estimated charge.

    A call sent without a usable reply is charged an estimate (``unanswered_cost_usd``),
    which a resumed run's budget must count as the first invocation did.
    """
    return known_cost(record.cost_usd) + (record.unanswered_cost_usd or 0.0)


def summed_cost(costs: Iterable[float | None]) -> float | None:
    """The sum of logged costs, or None if any of them is unknown."""
    total = 0.0
    for cost in costs:
        if cost is None:
            return None
        total += cost
    return total


@dataclass(frozen=True)
class RunManifest:
    """What a run was and how it was made, written once when it starts (``manifest.json``).

    The records inside are JSON objects whose shape belongs to their writers (the resolved
    run, the agent's description, the prompt's hashes); the reader checks the fields that
    other modules rely on, and the properties below are how they read them. The run's
    settings are read typed with ``llm_aai.settings.settings_of``.

    Attributes:
        run: version 3: the resolved run (``ResolvedRun.to_record``): its config, tasks,
            prices, variants...; None in earlier versions.
        config: versions 1 and 2: the suite's resolved settings; None in version 3.
        run_id: the run's name (None in hand-made manifests: the directory's name is used).
        created: when the run started (ISO 8601, UTC).
        run_config: version 2 only: the settings the run was started with.
        cli_args: version 1 only: the command line's arguments, which resume converts.
        agent: the agent's description (name, kind, options without secrets, litellm model).
        prompt: the prompt's name, text and sha256, and the worked example's hash for icl.
        seeds: ``{"run": seed, "episodes": {episode_id: seed}}``.
        arenas: the sha256 of every task's arena file, by task id.
        arenas_location: where the run found its testbed arena files when it started:
            ``{"folder": absolute path, "source": "--arenas-dir" | "env:LLM_AAI_ARENAS" |
            "cache"}``, so a later re-simulation finds them without the same flags or
            environment; None for a run of variants, and in manifests written before it was
            recorded (they keep version 3: a reader of those falls back to ``arenas_dir``).
        versions: package versions; git: the source revision (None outside a checkout);
            host: Python, platform and ``MUJOCO_GL``.
        cache: the response cache's use with ``--cache``: ``{"directory", "hits",
            "misses"}``, summed over every invocation of the run and brought up to date when
            each ends (the one field written after the run starts); None without a cache.
        warnings: what the run noticed that makes its results mean less than they seem,
            written as the run ends (summed over invocations): ``{"lost_input": {"turns",
            "first"}}``, the turns whose server counted far fewer prompt tokens than were
            sent (``llm_aai.llm.lost_input``); None when there was nothing to say.
        schema_version: the turn and result records' schema the run wrote.
        manifest_version: this record's own version.

    """

    run: Mapping[str, Any] | None = None
    config: Mapping[str, Any] | None = None
    run_id: str | None = None
    created: str | None = None
    run_config: Mapping[str, Any] | None = None
    cli_args: Mapping[str, Any] | None = None
    agent: Mapping[str, Any] = field(default_factory=dict)
    prompt: Mapping[str, Any] = field(default_factory=dict)
    seeds: Mapping[str, Any] = field(default_factory=dict)
    arenas: Mapping[str, str] = field(default_factory=dict)
    arenas_location: Mapping[str, str] | None = None
    versions: Mapping[str, Any] = field(default_factory=dict)
    git: Mapping[str, Any] | None = None
    host: Mapping[str, Any] = field(default_factory=dict)
    cache: Mapping[str, Any] | None = None
    warnings: Mapping[str, Any] | None = None
    schema_version: int = SCHEMA_VERSION
    manifest_version: int = MANIFEST_VERSION

    @property
    def _settings(self) -> Mapping[str, Any]:
        """The record that holds ``model`` and ``prompt``, by version (checked on reading)."""
        return self.run["config"] if self.run is not None else self.config or {}

    @property
    def model(self) -> str:
        """The agent the run asked for (``claude``, ``heuristic``, a litellm string...)."""
        return self._settings["model"]

    @property
    def prompt_name(self) -> str:
        """The prompt's name (``react``, ``icl``) or the prompt file given."""
        return self._settings["prompt"]

    @property
    def agent_name(self) -> str | None:
        """The agent's name as described when the run started."""
        return self.agent.get("name")

    @property
    def episode_seeds(self) -> Mapping[str, int]:
        """Every planned episode's reset seed, by episode id."""
        return self.seeds.get("episodes", {})

    def arena_sha256(self, task_id: str) -> str | None:
        """The checksum of the arena file the run played ``task_id`` in (None if unrecorded)."""
        return self.arenas.get(task_id)

    @property
    def arenas_dir(self) -> str | None:
        """The arenas folder the run was given (absolute), or None for the default lookup."""
        settings = (self.run["config"] if self.run is not None else
                    self.run_config if self.run_config is not None else self.cli_args or {})
        return settings.get("arenas_dir")

    @property
    def arenas_found_in(self) -> tuple[str, str] | None:
        """``(folder, source)`` the run found its testbed arenas in, or None if unrecorded."""
        if self.arenas_location is None:
            return None
        return self.arenas_location["folder"], self.arenas_location["source"]

    @property
    def cache_hits(self) -> int:
        """Requests the response cache answered over the run (0 without a cache)."""
        return int((self.cache or {}).get("hits", 0))

    @property
    def cache_misses(self) -> int:
        """Requests sent to the model with a cache that did not hold them."""
        return int((self.cache or {}).get("misses", 0))

    def to_dict(self) -> dict[str, Any]:
        """The manifest as JSON data (an earlier version keeps its own fields)."""
        data = to_dict(self)
        for optional in ("run", "config", "run_config", "cli_args", "cache",  # by version
                         "warnings", "arenas_location"):
            if data[optional] is None:
                del data[optional]
        return data


# The fields other modules rely on: (dotted path, JSON kinds allowed, required).
_MANIFEST_FIELDS: tuple[tuple[str, tuple[type, ...], bool], ...] = (
    ("manifest_version", (int,), False),
    ("schema_version", (int,), False),
    ("run", (dict,), False),
    ("run.config", (dict,), False),
    ("run.config.model", (str,), False),
    ("run.config.prompt", (str,), False),
    ("run.tasks", (list,), False),
    ("config", (dict,), False),
    ("config.model", (str,), False),
    ("config.prompt", (str,), False),
    ("config.tasks", (list,), False),
    ("config.trials", (int,), False),
    ("config.backend", (str,), False),
    ("config.resolution", (int,), False),
    ("config.physics_build", (str,), False),
    ("config.protocol", (dict,), False),
    ("run_id", (str,), False),
    ("created", (str,), False),
    ("run_config", (dict,), False),
    ("cli_args", (dict,), False),
    ("agent", (dict,), False),
    ("agent.name", (str,), False),
    ("agent.litellm_model", (str, type(None)), False),
    ("agent.options", (dict,), False),
    ("prompt", (dict,), False),
    ("prompt.name", (str,), False),
    ("prompt.sha256", (str,), False),
    ("seeds", (dict,), False),
    ("seeds.run", (int,), False),
    ("seeds.episodes", (dict,), False),
    ("arenas", (dict,), False),
    ("arenas_location", (dict,), False),
    ("arenas_location.folder", (str,), False),
    ("arenas_location.source", (str,), False),
    ("versions", (dict,), False),
    ("git", (dict, type(None)), False),
    ("host", (dict,), False),
    ("cache", (dict,), False),
    ("cache.directory", (str,), False),
    ("cache.hits", (int,), False),
    ("cache.misses", (int,), False),
    ("warnings", (dict,), False),
    ("warnings.lost_input", (dict,), False),
    ("warnings.lost_input.turns", (int,), False),
)
_WANTED = {str: "a string", int: "an integer", dict: "an object", list: "an array",
           type(None): "null"}
# Objects whose every value must be of one kind: (dotted path, kind).
_MANIFEST_TABLES = (("config.tasks", str), ("run.tasks", str), ("seeds.episodes", int),
                    ("arenas", str))
# The fields each version must have, by the first version that has them.
_REQUIRED_BY_VERSION = ((1, 2, ("config", "config.model", "config.prompt")),
                        (3, MANIFEST_VERSION, ("run", "run.config", "run.config.model",
                                               "run.config.prompt", "run.tasks")))


def manifest_from_dict(data: Any) -> RunManifest:
    """Rebuild a RunManifest from its JSON data, version 1 to 3.

    Raises:
        SchemaError: not an object, a manifest version this llm-aai does not read, or a field
            of the wrong kind; the message names the field as ``'config.model'``.

    """
    _require_object(data, "manifest")
    version = data.get("manifest_version", 1)  # version 1 did not record its version
    for dotted, kinds, required in _MANIFEST_FIELDS:
        _check_field(data, dotted, kinds, required)
    if not 1 <= version <= MANIFEST_VERSION:
        raise SchemaError(f"manifest_version {version}; this llm-aai reads 1 to "
                          f"{MANIFEST_VERSION}")
    if data.get("schema_version", SCHEMA_VERSION) != SCHEMA_VERSION:
        raise SchemaError(f"schema_version {data['schema_version']!r}; this llm-aai reads "
                          f"{SCHEMA_VERSION}")
    if version == 2 and "run_config" not in data:
        raise SchemaError("field 'run_config': missing (a version 2 manifest records the "
                          "run's settings there)")
    for first, last, required in _REQUIRED_BY_VERSION:
        for dotted in required if first <= version <= last else ():
            if not _lookup(data, dotted)[0]:
                raise SchemaError(f"missing field {dotted!r}")
    for dotted, kind in _MANIFEST_TABLES:
        _check_table(data, dotted, kind)
    for dotted in ("arenas_location.folder", "arenas_location.source"):
        if "arenas_location" in data and not _lookup(data, dotted)[0]:
            raise SchemaError(f"missing field {dotted!r}")
    known = {f.name for f in dataclasses.fields(RunManifest)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise SchemaError(f"unknown field {unknown[0]!r} (this llm-aai reads manifests up to "
                          f"version {MANIFEST_VERSION})")
    return RunManifest(**{**data, "manifest_version": version})


def _lookup(data: Mapping[str, Any], dotted: str) -> tuple[bool, Any]:
    """``(present, value)`` of a dotted field; absent when a parent is absent or not an object."""
    value: Any = data
    for key in dotted.split("."):
        if not isinstance(value, dict) or key not in value:
            return False, None
        value = value[key]
    return True, value


def _check_field(data: Mapping[str, Any], dotted: str, kinds: tuple[type, ...],
                 required: bool) -> None:
    present, value = _lookup(data, dotted)
    if not present:
        if required:
            raise SchemaError(f"missing field {dotted!r}")
        return
    if isinstance(value, bool) and bool not in kinds or not isinstance(value, kinds):
        wanted = " or ".join(_WANTED[kind] for kind in kinds)
        raise SchemaError(f"field {dotted!r}: expected {wanted}, got {_kind_of(value)}")


def _check_table(data: Mapping[str, Any], dotted: str, kind: type) -> None:
    present, table = _lookup(data, dotted)
    if not present:
        return
    items = table.items() if isinstance(table, dict) else enumerate(table)
    for key, value in items:
        if isinstance(value, bool) or not isinstance(value, kind):
            where = f"{dotted}.{key}" if isinstance(table, dict) else f"{dotted}[{key}]"
            raise SchemaError(f"field {where!r}: expected {_WANTED[kind]}, "
                              f"got {_kind_of(value)}")


def move_text(command: Mapping[str, Any]) -> str:
    """A logged move as the reply wrote it: ``Go(3)``, or ``forward x4`` for a frame action."""
    if command.get("op") == "Act":  # --control action
        return f"{command.get('arg')} x{command.get('repeat', 1)}"
    return f"{command.get('op')}({command.get('arg')})"


def to_dict(record: Any) -> dict[str, Any]:
    """Serialise a record to JSON-ready data: nested records become dicts.

    Tuples are kept as they are (``json`` writes them as lists); a field marked to be omitted
    while None is left out then. Not ``dataclasses.asdict``:
    it deep-copies every element, and a run-out turn carries thousands of actions.
    """
    return {f.name: _plain(getattr(record, f.name)) for f in dataclasses.fields(record)
            if not (f.metadata.get(_OMITTED_WHEN_NONE) and getattr(record, f.name) is None)}


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_dict(value)
    return value


def turn_from_dict(data: dict[str, Any]) -> TurnRecord:
    """Rebuild a TurnRecord, refusing records from another schema version."""
    _check_schema(data)
    data = dict(data)
    data["usage"] = Usage(**_require_object(data.get("usage", {}), "usage"))
    images = data.get("sent_images", ())
    if not isinstance(images, list | tuple) or not all(isinstance(i, str) for i in images):
        # paths are checked by the readers that open them (logs.frame_files); kinds here
        raise SchemaError("sent_images must be a list of strings (frame paths)")
    for key in ("sent_images", "normalizations", "events"):
        data[key] = tuple(data.get(key, ()))
    data["actions"] = tuple(tuple(a) for a in data.get("actions", ()))
    if data.get("commands") is not None:
        data["commands"] = tuple(data["commands"])
    return TurnRecord(**data)


def result_from_dict(data: dict[str, Any]) -> EpisodeResult:
    """Rebuild an EpisodeResult, refusing records from another schema version.

    Each field's JSON kind is checked against the record's annotation: a hand-edited
    ``"passed": "false"`` would otherwise count as a pass (any non-empty string is true) and a
    ``"reward": "-1.0"`` fail deep inside an analysis that cannot say which file it came from.
    """
    _check_schema(data)
    _check_kinds(data, EpisodeResult)
    return EpisodeResult(**data)


_ANNOTATED_KINDS: dict[str, tuple[tuple[type, ...], str]] = {
    "str": ((str,), "a string"), "int": ((int,), "an integer"),
    "float": ((int, float), "a number"), "bool": ((bool,), "a boolean"),
}
"""Python types of the JSON values a field of each annotation accepts, and their name
(``X | None`` adds null)."""


def _check_kinds(data: dict[str, Any], record: type) -> None:
    """Raise a SchemaError naming the first field whose value is of the wrong JSON kind."""
    for spec in dataclasses.fields(record):
        if spec.name not in data:
            continue
        annotation = str(spec.type)
        optional = annotation.endswith(" | None")
        accepted = _ANNOTATED_KINDS.get(annotation.removesuffix(" | None"))
        if accepted is None:
            continue
        kinds, wanted = accepted
        value = data[spec.name]
        if value is None and optional:
            continue
        if isinstance(value, bool) and bool not in kinds or not isinstance(value, kinds):
            raise SchemaError(f"field {spec.name!r}: expected {wanted}"
                              f"{' or null' if optional else ''}, got {_kind_of(value)}")


def _check_schema(data: Any) -> None:
    _require_object(data, "log record")
    version = data.get("schema")
    if version != SCHEMA_VERSION:
        raise SchemaError(f"log record has schema {version!r}; this llm-aai reads {SCHEMA_VERSION}")


_JSON_KINDS = {list: "an array", str: "a string", bool: "a boolean", int: "a number",
               float: "a number", type(None): "null", dict: "an object"}


def _kind_of(value: Any) -> str:
    return _JSON_KINDS.get(type(value), type(value).__name__)


def _require_object(value: Any, what: str) -> dict[str, Any]:
    """Return ``value`` if it is a JSON object, else raise a SchemaError naming what it is.

    Valid JSON that is not an object (a line ``[1, 2]``, a file ``null``) would otherwise fail
    deep inside the record constructor with an AttributeError or TypeError that names neither
    the problem nor, once the reader adds it, the place.
    """
    if not isinstance(value, dict):
        raise SchemaError(f"{what}: expected a JSON object, got {_kind_of(value)}")
    return value
