"""What a run is asked to do, as frozen dataclasses: the one home of every run default and rule.

``start_run`` (``llm_aai.runner.app``) takes a ``RunConfig``; the manifest records it inside the
resolved run (``llm_aai.settings.resolved``) and every reader gets it back typed from there. The
run command's flags are the config's fields (each flag's ``dest`` is the field's dotted path,
``llm_aai.cli.run``) and take their defaults from here; the model options take theirs from the
model client (``llm_aai.llm.client``), so each default has one value wherever a run is started
from: a notebook, the benchmark or the command line. The rules between fields live in
``__post_init__`` and raise a ``ConfigError`` naming the field, which the command line names
as its flag.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pydantic import TypeAdapter, ValidationError

from llm_aai.execution.registry import CHOICES as EXECUTOR_CHOICES
from llm_aai.frames import FrameFormat
from llm_aai.llm.client import (
    DEFAULT_MAX_RETRIES,
    DEFAULT_MAX_TOKENS,
    DEFAULT_TEMPERATURE,
    DEFAULT_TIMEOUT_S,
)
from llm_aai.logs.schema import SchemaError
from llm_aai.protocol import EpisodeProtocol
from llm_aai.protocol.modes import RENAMED_CONTROLS, ModeSettings
from llm_aai.protocol.presets import ConfigError
from llm_aai.script import MODES as SCRIPT_MODES
from llm_aai.sim.simulator import PHYSICS_BUILDS

__all__ = ["MAX_RESOLUTION", "MIN_RESOLUTION", "V1_CLI_ARGS", "ConfigError", "ModelOptions",
           "ResumeOverrides", "RunConfig", "default_run_id", "record_of_cli_args"]

MIN_RESOLUTION = 64
"""The smallest square frame the agent is sent, in pixels."""
MAX_RESOLUTION = 1024
"""The largest square frame: Animal-AI's own limit for its cameras."""
MAX_TRIALS = 1000
"""Trials a task at most. The manifest lists every episode's seed, so the count sizes the run
before anything is played: ``--trials 10000000`` wrote a 386 MB manifest for one task."""
MAX_CONCURRENCY = 256
"""Episodes at once at most: each is a thread with its own simulator."""
MAX_RELAUNCHES = 100
"""Relaunches of one episode at most (each may pay the model again)."""
MAX_REPLIES = 100_000
"""Scripts or replies an episode at most (``--max-scripts``, ``--max-replies``): the longest
testbed episode has 1,667 steps, so a larger cap is a typo, not a setting."""


@dataclass(frozen=True)
class ModelOptions:
    """How a model agent calls its provider (the built-in agents ignore these).

    Attributes:
        api_base: base URL of the provider's API (a local OpenAI-compatible server, a proxy,
            ``llm_aai.llm.fake_server``); None for the provider's own.
        temperature: sampling temperature (the paper's: 0).
        max_tokens: reply length limit per call.
        timeout_s: seconds per model call.
        max_retries: retries of a call on 429, 5xx and refused connections, with backoff
            and Retry-After (a call that timed out is not retried: ``RetryPolicy``).
        provider_concurrency: simultaneous calls to one provider; None: the run's concurrency.
        provider_rpm: calls to one provider in any minute, on this machine or the
            whole Ray cluster (``llm_aai.llm.provider_limits``); None: no limit. Not in the
            response cache's key: it changes when calls are sent, not their replies.
        keep_last_images: send only the last K images (older ones become a text placeholder);
            None sends them all.
        keep_last_turns: send only the last N turns (each a message and its reply) after
            the prompt and worked example, so a conversation fits a small context window;
            None sends them all (the paper).
        prompt_caching: add Anthropic prompt-caching breakpoints.
        price_per_mtok: dollars per million input and output tokens, for a model litellm
            has no price for (or to override its price); None: litellm's prices.
        stop: stop sequences sent with every request (``--stop``): a base model served
            locally writes on past its reply into a made-up next turn without them.
        sampling: further request parameters, ``(name, value)`` pairs sent as they are
            (``--sampling top_p=0.9``); a value is a number, a boolean or a string. The
            parameters the client or a flag of their own sets are refused.
        fold_system_prompt: send the system prompt at the head of the first user message
            rather than as a system message, for a chat template without a system role
            (which drops it without a word).

    """

    api_base: str | None = None
    temperature: float = DEFAULT_TEMPERATURE
    max_tokens: int = DEFAULT_MAX_TOKENS
    timeout_s: float = DEFAULT_TIMEOUT_S
    max_retries: int = DEFAULT_MAX_RETRIES
    provider_concurrency: int | None = None
    provider_rpm: int | None = None
    keep_last_images: int | None = None
    keep_last_turns: int | None = None
    prompt_caching: bool = False
    price_per_mtok: tuple[float, float] | None = None
    stop: tuple[str, ...] = ()
    sampling: tuple[tuple[str, bool | int | float | str], ...] = ()
    fold_system_prompt: bool = False

    def __post_init__(self) -> None:
        """Refuse values no provider call can use, before any run directory exists."""
        _check_url("api_base", self.api_base)
        _check_number("temperature", self.temperature, low=0.0)
        _check_number("max_tokens", self.max_tokens, low=1)
        _check_number("timeout_s", self.timeout_s, low=0.0, low_open=True)
        _check_number("max_retries", self.max_retries, low=0)
        _check_number("provider_concurrency", self.provider_concurrency, low=1)
        _check_number("provider_rpm", self.provider_rpm, low=1)
        _check_number("keep_last_images", self.keep_last_images, low=1)
        _check_number("keep_last_turns", self.keep_last_turns, low=1)
        for price in self.price_per_mtok or ():
            _check_number("price_per_mtok", price, low=0.0)
        if any(not isinstance(text, str) or not text for text in self.stop):
            raise ConfigError("stop", f"takes non-empty text, not {self.stop!r}")
        _check_sampling(self.sampling)

    @property
    def extra_params(self) -> dict[str, Any] | None:
        """What a request carries besides the client's own parameters (None: nothing)."""
        params: dict[str, Any] = dict(self.sampling)
        if self.stop:
            params["stop"] = list(self.stop)
        return params or None


OWN_PARAMETERS = {"temperature": "{temperature}", "max_tokens": "{max_tokens}",
                  "max_completion_tokens": "{max_tokens}", "timeout": "{timeout_s}",
                  "stop": "{stop}", "api_base": "{api_base}", "base_url": "{api_base}",
                  "model": "--model", "messages": "the conversation", "api_key": "the key",
                  "num_retries": "{max_retries}", "max_retries": "{max_retries}",
                  "stream": "the client (it reads whole replies)", "n": "the client (one reply)"}
"""Request parameters ``sampling`` may not set -> what sets them (a flag by its field)."""


def _check_sampling(sampling: tuple[tuple[str, Any], ...]) -> None:
    """Refuse a parameter that is no name, one set elsewhere, or a value of no JSON kind."""
    seen: set[str] = set()
    for pair in sampling:
        if not isinstance(pair, tuple | list) or len(pair) != 2:
            raise ConfigError("sampling", f"takes (name, value) pairs, not {pair!r}")
        name, value = pair
        if not isinstance(name, str) or not name.isidentifier():
            raise ConfigError("sampling", f"{name!r} is not a parameter name")
        if name in OWN_PARAMETERS:
            raise ConfigError("sampling", f"cannot set {name!r}: {OWN_PARAMETERS[name]} does")
        if name in seen:
            raise ConfigError("sampling", f"sets {name!r} twice")
        seen.add(name)
        finite = not isinstance(value, float) or math.isfinite(value)
        if not isinstance(value, bool | int | float | str) or not finite:
            raise ConfigError("sampling", f"{name}={value!r}: a value is a finite number, "
                                          f"true or false, or a string")


@dataclass(frozen=True)
class RunConfig:
    """Everything a run is asked to do; ``start_run``'s input and what resume restores.

    Attributes:
        model: an alias (``claude``), a litellm model string, or a built-in agent
            (``heuristic``, ``random``, ``human``, ``replay``).
        level: levels to play, e.g. ``"1-10"`` or ``"1,3,5"``; None for all.
        tasks: comma-separated task ids; None for all (both filters apply when both given).
        full_testbed: select from all 900 testbed tasks instead of the 40-task subset.
        trials: episodes per task, each with its own seed.
        seed: the run seed; each episode's seed derives from it, the task and the trial.
        backend: ``embedded`` (our simulator) or ``unity`` (the Animal-AI build).
        physics_build: with the embedded backend, the Animal-AI build whose physics the
            simulator follows: ``3.x`` (the build the LLM-AAI paper used, 3.1.3) or ``2019``
            (the Olympics build: bounce balls of bounciness 0.8, zone triggers that end at
            the floor, no health; ``llm_aai.sim.builds``).
        resolution: square frame size in pixels.
        frames: how frames are sent and logged (JPEG at quality 75, as in the paper).
        prompt: ``react`` (experiment 1), ``icl`` (experiment 2) or a prompt file.
        example: with ``icl``, an example folder instead of the built-in tutorial.
        script_mode: ``strict`` (the paper's grammar) or ``lenient`` (repairs, each logged).
        protocol: the episode protocol's numbers (the paper's by default).
        modes: the control and observation modes (the paper's by default: scripts, one
            frame per script).
        concurrency: episodes played at once.
        max_relaunches: relaunches of a trial whose model calls kept failing.
        relaunch_delay_s: seconds before the n-th relaunch, times n.
        stop_after_failed_episodes: stop after this many episodes in a row lost to
            infrastructure errors.
        budget_usd: start no more episodes once the run has cost this much; None: no limit.
        arenas_dir: folder of testbed YAMLs; None: ``$LLM_AAI_ARENAS`` or the cache.
        unity_build: with the unity backend, the player executable; None:
            ``$LLM_AAI_UNITY_BUILD``, else animalai's own search.
        replay_from: with ``model="replay"``, the episode directory (or scripts file) whose
            scripts are re-issued.
        oracle_budget: with ``model="oracle"``, its search budget per episode in simulated
            steps; None: the oracle's default.
        cache_dir: answer identical requests at temperature 0 from this response cache
            (``llm_aai.llm.cache``); None: no cache.
        model_options: how a model agent calls its provider.
        observation: what each message shows: ``image`` (the paper's), ``text`` (a
            description of what the eye sees, ``llm_aai.perception``) or ``both``.
        perspective: the text's frame of reference: ``egocentric`` or ``allocentric``
            (``frame`` in manifests written before issue 34; still read).
        variants: play the kept variants of this folder (``python -m llm_aai.variants make``)
            instead of testbed tasks; ``level`` and ``tasks`` then filter by parent task.
        variant_seed: with ``run --variants K``, the seed the variants were made with (the
            command makes or reuses them and sets ``variants`` to their folder; recorded).
        executor: where episodes play: ``local`` (threads of this process) or ``ray`` (Ray
            tasks on a cluster, docs/ray.md); ``concurrency`` episodes at once either way.
        ray_address: with ``executor`` ray, the cluster to join; None starts a Ray here.
        ray_episode_cpus: with ``executor`` ray, the CPUs each episode's Ray task reserves, so
            a cluster of C CPUs plays up to C / ray_episode_cpus episodes at once (bounded by
            ``concurrency``). None: the agent's (``llm_aai.runner.ray_suite``: 1 for a
            built-in agent, which simulates flat out; 0.25 for a model, whose episode mostly
            waits on its calls), decided when the run starts and recorded in its manifest.

    """

    model: str
    level: str | None = None
    tasks: str | None = None
    full_testbed: bool = False
    trials: int = 1
    seed: int = 0
    backend: str = "embedded"
    physics_build: str = PHYSICS_BUILDS[0]
    resolution: int = 512
    frames: FrameFormat = field(default_factory=FrameFormat)
    prompt: str = "react"
    example: Path | None = None
    script_mode: str = "strict"
    protocol: EpisodeProtocol = field(default_factory=EpisodeProtocol)
    modes: ModeSettings = field(default_factory=ModeSettings)
    concurrency: int = 1
    max_relaunches: int = 2
    relaunch_delay_s: float = 5.0
    stop_after_failed_episodes: int = 3
    budget_usd: float | None = None
    arenas_dir: Path | None = None
    unity_build: Path | None = None
    replay_from: Path | None = None
    oracle_budget: int | None = None
    model_options: ModelOptions = field(default_factory=ModelOptions)
    cache_dir: Path | None = None
    observation: str = "image"
    perspective: str = "egocentric"
    variants: Path | None = None
    variant_seed: int | None = None
    executor: str = "local"
    ray_address: str | None = None
    ray_episode_cpus: float | None = None

    def __post_init__(self) -> None:
        """Refuse values a run cannot use, so a library call fails as early as the CLI does.

        Raises:
            ConfigError: the first setting out of range, named with its range.

        """
        _check_number("trials", self.trials, low=1, high=MAX_TRIALS)
        _check_number("resolution", self.resolution, low=MIN_RESOLUTION, high=MAX_RESOLUTION)
        _check_number("concurrency", self.concurrency, low=1, high=MAX_CONCURRENCY)
        _check_number("max_relaunches", self.max_relaunches, low=0, high=MAX_RELAUNCHES)
        _check_number("protocol.max_scripts", self.protocol.max_scripts, low=1,
                      high=MAX_REPLIES)
        _check_number("protocol.max_replies", self.protocol.max_replies, low=1,
                      high=MAX_REPLIES)
        _check_number("relaunch_delay_s", self.relaunch_delay_s, low=0.0)
        _check_number("stop_after_failed_episodes", self.stop_after_failed_episodes, low=1)
        _check_number("budget_usd", self.budget_usd, low=0.0, low_open=True)
        _check_number("ray_episode_cpus", self.ray_episode_cpus, low=1e-4)  # Ray's precision
        if self.script_mode not in SCRIPT_MODES:  # a typo would read scripts strictly
            raise ConfigError("script_mode", f"must be one of {', '.join(SCRIPT_MODES)}, not "
                              f"{self.script_mode!r}")
        if self.physics_build not in PHYSICS_BUILDS:
            raise ConfigError("physics_build", f"must be one of {', '.join(PHYSICS_BUILDS)}, "
                              f"not {self.physics_build!r}")
        self._check_together()

    def _check_together(self) -> None:
        """The rules between fields, each refused on the field that breaks it."""
        for name in ("level", "tasks"):
            if getattr(self, name) is not None and not getattr(self, name).strip():
                raise ConfigError(name, "is empty; leave it out to run every task")
        if self.executor not in EXECUTOR_CHOICES:
            raise ConfigError("executor", f"must be one of {', '.join(EXECUTOR_CHOICES)}, not "
                              f"{self.executor!r}")
        if self.ray_address is not None and self.executor != "ray":
            raise ConfigError("ray_address", "names a Ray cluster: it needs {executor} ray")
        if self.ray_episode_cpus is not None and self.executor != "ray":
            raise ConfigError("ray_episode_cpus", "reserves a Ray cluster's CPUs: it needs "
                              "{executor} ray")
        if self.unity_build is not None and self.backend != "unity":
            raise ConfigError("unity_build", "needs {backend} unity")
        if self.backend != "embedded" and self.physics_build != PHYSICS_BUILDS[0]:
            raise ConfigError("physics_build", f"{self.physics_build} chooses the embedded "
                              "simulator's physics; a Unity player has its own build's")
        if self.modes.control == "action" and self.protocol.max_scripts is not None:
            raise ConfigError("protocol.max_scripts", "caps scripts; {modes.control} action "
                              "counts replies: use {protocol.max_replies}")
        if self.protocol.max_scripts is None and self.protocol.max_replies is None:
            raise ConfigError("protocol.max_replies", "is needed without the script cap, or an "
                              "episode ends only at the arena's time limit: give "
                              "{protocol.max_replies} N as a cost guard")

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> RunConfig:
        """A config from its fields by dotted path (``{"protocol.max_scripts": 5}``).

        The nested records are built at once, so a rule between two of their fields sees
        both (``modes.filmstrip`` with ``modes.observe_every``); a field left out keeps its
        default.

        Raises:
            ConfigError: a value or a combination the run cannot use, on its dotted field.

        """
        nested: dict[str, dict[str, Any]] = {}
        top: dict[str, Any] = {}
        for path, value in values.items():
            parent, _, name = path.partition(".")
            if name:
                nested.setdefault(parent, {})[name] = value
            else:
                top[path] = value
        kinds = {f.name: f.default_factory for f in dataclasses.fields(cls)}
        for parent, fields in nested.items():
            try:
                top[parent] = kinds[parent](**fields)  # type: ignore[operator]
            except ConfigError as error:
                raise error.within(parent) from None
        return cls(**top)

    @classmethod
    def field_paths(cls) -> tuple[str, ...]:
        """Every setting by dotted path, nested records' fields included (not the records)."""
        paths: list[str] = []
        for f in dataclasses.fields(cls):
            nested = f.default_factory
            if dataclasses.is_dataclass(nested):
                paths += [f"{f.name}.{inner.name}" for inner in dataclasses.fields(nested)]
            else:
                paths.append(f.name)
        return tuple(paths)

    def value_of(self, path: str) -> Any:
        """The value of a dotted field (``"modes.control"``)."""
        value: Any = self
        for name in path.split("."):
            value = getattr(value, name)
        return value

    def to_record(self) -> dict[str, Any]:
        """The config as JSON data: the manifest's ``run_config`` (paths as text)."""
        return _RECORD.dump_python(self, mode="json")

    @classmethod
    def from_record(cls, record: Mapping[str, Any], *, section: str = "run_config") -> RunConfig:
        """Rebuild a config from ``to_record``'s data.

        Fields added to the config after the record was written take their defaults, as a
        run started then would have had them; fields renamed since are read by their old
        names too (``RENAMED_FIELDS``).

        Raises:
            SchemaError: an unknown field, or a value of the wrong kind; the message names
                the field as ``'<section>.<field>'``.

        """
        record = with_current_names(record)
        _refuse_unknown_fields(cls, record, section)
        try:
            return _RECORD.validate_json(json.dumps(dict(record)), strict=True)
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in (section, *first["loc"]))
            raise SchemaError(f"field {where!r}: {first['msg']}") from None


@dataclass(frozen=True)
class ResumeOverrides:
    """What a resumed run may change: where and how fast it runs, and how much it may spend.

    Nothing that changes what the run measures (model, tasks, protocol, prompt...) can be
    changed: a resumed run that mixed two settings would not be one experiment. None keeps the
    run's own value.
    """

    concurrency: int | None = None
    arenas_dir: Path | None = None
    api_base: str | None = None
    budget_usd: float | None = None
    stop_after_failed_episodes: int | None = None
    unity_build: Path | None = None
    price_per_mtok: tuple[float, float] | None = None
    cache_dir: Path | None = None
    executor: str | None = None
    ray_address: str | None = None
    ray_episode_cpus: float | None = None

    def apply(self, config: RunConfig) -> RunConfig:
        """The run's config with the given overrides (an arenas folder made absolute)."""
        model_fields = ("api_base", "price_per_mtok")
        changes: dict[str, Any] = {name: value for name, value in dataclasses.asdict(self).items()
                                   if value is not None and name not in model_fields}
        if self.arenas_dir is not None:
            changes["arenas_dir"] = Path(self.arenas_dir).resolve()
        if self.unity_build is not None:
            changes["unity_build"] = Path(self.unity_build).absolute()
        if self.executor == "local" and self.ray_address is None:
            changes["ray_address"] = None  # a run moved off its cluster leaves its address
            changes["ray_episode_cpus"] = None  # and its CPUs per episode
        model_changes = {name: getattr(self, name) for name in model_fields
                         if getattr(self, name) is not None}
        if model_changes:
            changes["model_options"] = dataclasses.replace(config.model_options,
                                                           **model_changes)
        return dataclasses.replace(config, **changes)


def default_run_id(model: str) -> str:
    """A sortable, filesystem-safe run name: the UTC time, then the model.

    The model's part is cut to 150 bytes (UTF-8, whole characters), so that the name and its
    ``-N`` suffix fit in a folder name (the run's check allows 200 bytes) whatever the model.
    """
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in model)
    return f"{stamp}_{safe.encode()[:150].decode(errors='ignore')}"


_RECORD = TypeAdapter(RunConfig)

V1_CLI_ARGS = {
    "model": "model", "level": "level", "tasks": "tasks", "full_testbed": "full_testbed",
    "trials": "trials", "seed": "seed", "backend": "backend", "resolution": "resolution",
    "physics_build": "physics_build",
    "frames": "frames.kind", "jpeg_quality": "frames.quality", "prompt": "prompt",
    "example": "example", "script_mode": "script_mode",
    "max_scripts": "protocol.max_scripts",
    "initial_observations": "protocol.initial_observations",
    "concurrency": "concurrency", "max_relaunches": "max_relaunches",
    "relaunch_delay": "relaunch_delay_s", "stop_after_failures": "stop_after_failed_episodes",
    "budget_usd": "budget_usd", "arenas_dir": "arenas_dir", "replay_from": "replay_from",
    "oracle_budget": "oracle_budget",
    "unity_build": "unity_build",
    "api_base": "model_options.api_base", "temperature": "model_options.temperature",
    "max_tokens": "model_options.max_tokens", "timeout": "model_options.timeout_s",
    "max_retries": "model_options.max_retries",
    "provider_concurrency": "model_options.provider_concurrency",
    "keep_last_images": "model_options.keep_last_images",
    "prompt_caching": "model_options.prompt_caching",
    "price_per_mtok": "model_options.price_per_mtok",
    "cache": "cache_dir",
    "control": "modes.control", "observe_every": "modes.observe_every",
    "filmstrip": "modes.filmstrip", "max_replies": "protocol.max_replies",
    "context": "modes.context", "order": "modes.order",
    "observation": "observation", "frame": "perspective", "variants": "variants",
    "variant_seed": "variant_seed",
}
"""A version 1 manifest's ``cli_args`` (the run command's arguments then) -> the config field
each set. Frozen: it reads the manifests of that version, whatever the flags are called now."""
_CLI_V1_NOT_SETTINGS = frozenset({"resume", "out", "run_id", "no_progress"})


RENAMED_FIELDS = {"frame": "perspective"}
"""Config fields renamed since a manifest may have been written: old name -> new name (issue
34 gave each word one meaning: a frame is a camera image). Manifests keep reading."""
RENAMED_VALUES = {("modes", "control"): RENAMED_CONTROLS}
"""Values renamed since: (record, field) -> {old value: new value} (``--control frame`` is
``action``)."""


def with_current_names(record: Mapping[str, Any]) -> Mapping[str, Any]:
    """A config record with its renamed fields and values under their current names.

    Raises:
        SchemaError: the record holds a field under both its old and its new name.

    """
    if not isinstance(record, Mapping):
        return record
    current = dict(record)
    for old, new in RENAMED_FIELDS.items():
        if old in current:
            if new in current:
                raise SchemaError(f"field {old!r}: the old name of {new!r}, which is also given")
            current[new] = current.pop(old)
    for (parent, name), renamed in RENAMED_VALUES.items():
        nested = current.get(parent)
        if isinstance(nested, Mapping) and isinstance(nested.get(name), str) \
                and nested[name] in renamed:
            current[parent] = {**nested, name: renamed[nested[name]]}
    return current


def record_of_cli_args(cli_args: Mapping[str, Any]) -> dict[str, Any]:
    """A version 1 manifest's command line as a config record.

    Arguments it lacks (flags newer than the run) take the config's defaults, except the
    frame format: runs started before it was a choice stored PNG frames.
    """
    unknown = sorted(set(cli_args) - set(V1_CLI_ARGS) - _CLI_V1_NOT_SETTINGS)
    if unknown:
        raise SchemaError(f"field 'cli_args.{unknown[0]}': not an argument this llm-aai knows")
    record: dict[str, Any] = {"frames": {"kind": "png"}}
    for name, path in V1_CLI_ARGS.items():
        if name in cli_args:
            *parents, leaf = path.split(".")
            target = record
            for parent in parents:
                target = target.setdefault(parent, {})
            target[leaf] = cli_args[name]
    return record


def _check_number(name: str, value: float | None, *, low: float, high: float | None = None,
                  low_open: bool = False) -> None:
    """Refuse a number that is not finite or lies outside [low, high] (or (low, high])."""
    if value is None or isinstance(value, bool):
        return
    if not isinstance(value, int | float) or not math.isfinite(value):
        raise ConfigError(name, f"must be a finite number, not {value!r}")
    below = value <= low if low_open else value < low
    if below or (high is not None and value > high):
        bound = f"greater than {low:g}" if low_open else f"at least {low:g}"
        if high is not None:
            bound += f" and at most {high:g}"
        shown = value if isinstance(value, int) else f"{value:g}"  # 10000000, not 1e+07
        raise ConfigError(name, f"must be {bound}, not {shown}")


def _check_url(name: str, value: str | None) -> None:
    """Refuse a base URL that is not http(s)://host[:port][/path]."""
    if value is None:
        return
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 (raises on a port that is not a number)
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(name, f"must be an http:// or https:// URL with a host, "
                                f"not {value!r}")


def _refuse_unknown_fields(kind: type, record: Any, where: str) -> None:
    """Name the first field of ``record`` (or of a nested record) that ``kind`` lacks."""
    if not isinstance(record, Mapping):
        return  # the validator names the wrong kind
    fields = {f.name: f for f in dataclasses.fields(kind)}
    for name, value in record.items():
        if name not in fields:
            raise SchemaError(f"field '{where}.{name}': not a setting this llm-aai knows")
        nested = fields[name].default_factory
        if dataclasses.is_dataclass(nested):
            _refuse_unknown_fields(nested, value, f"{where}.{name}")
