"""Agents by name: built-ins from a table, every other name is a model.

``resolve_agent`` validates a name and its options once, at start-up (a missing API key
is reported before any episode runs), and returns an :class:`AgentSpec` whose ``create``
builds a fresh agent for each episode, so concurrent episodes never share state.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from types import MappingProxyType
from typing import Any

from llm_aai.agents.base import Agent
from llm_aai.agents.heuristic import HeuristicAgent, HeuristicSettings
from llm_aai.agents.human import HumanAgent
from llm_aai.agents.llm import LLMAgent
from llm_aai.agents.oracle import OracleAgent
from llm_aai.agents.random_agent import RandomAgent
from llm_aai.agents.replay import ReplayAgent
from llm_aai.llm.aliases import MODEL_ALIASES, check_credentials, resolve_model
from llm_aai.llm.client import LiteLLMClient
from llm_aai.logs.store import read_turns
from llm_aai.protocol.presets import SET, Preset

__all__ = [
    "AGENTS",
    "CLIENT_OPTIONS",
    "MODEL_OPTIONS",
    "ORACLE_FRAMES_MAX_REPLIES",
    "AgentEntry",
    "AgentSpec",
    "agent_preset",
    "make_agent",
    "register_agent",
    "resolve_agent",
]


@dataclass(frozen=True)
class AgentEntry:
    """A built-in agent: how to build it, which options it takes and what it brings.

    Attributes:
        factory: builds one agent from its options.
        options: the options it takes.
        description: one line for listings.
        preset: the settings it plays with (the per-action oracle's action control) and those
            it needs (the replay agent's episode); None: any.

    """

    factory: Callable[..., Agent]
    options: frozenset[str]
    description: str
    preset: Preset | None = None


def _heuristic(control: str = "script", **options: Any) -> Agent:
    return HeuristicAgent(HeuristicSettings(**options), control=control)


def _oracle(**options: Any) -> Agent:
    return OracleAgent(**options)


def _oracle_frames(control: str = "action", **options: Any) -> Agent:
    return OracleAgent(per_frame=True, control=control, **options)


def _random(**options: Any) -> Agent:
    return RandomAgent(**options)


def _human(**options: Any) -> Agent:
    return HumanAgent(**options)


def _replay(scripts: list[str] | None = None, replay_from: Any = None, **options: Any) -> Agent:
    if (scripts is None) == (replay_from is None):
        raise ValueError("the replay agent needs either scripts=[...] or replay_from="
                         "an episode directory or a text file with one script per line")
    if scripts is None:
        scripts = load_replay_scripts(Path(replay_from))
    return ReplayAgent(scripts, **options)


def load_replay_scripts(source: Path) -> list[str]:
    """The replies of a logged episode (its directory), or the lines of a scripts file."""
    if source.is_dir():
        return [turn.reply for turn in read_turns(source) if turn.reply is not None]
    if source.is_file():
        return [line for line in source.read_text(encoding="utf-8").splitlines() if line.strip()]
    raise FileNotFoundError(f"nothing to replay at {source}: expected an episode directory "
                            "(with turns.jsonl) or a text file of scripts")


def _heuristic_options() -> frozenset[str]:
    return frozenset(f.name for f in fields(HeuristicSettings)) | {"control"}


ORACLE_FRAMES_MAX_REPLIES = 2000
"""The reply guard ``oracle-frames`` plays with when none is given: one reply per AAI step of
the longest testbed episode (t = 1000: 1,667 steps), so it never cuts the ceiling short."""

#: name -> built-in agent. Extend with :func:`register_agent`.
AGENTS: dict[str, AgentEntry] = {
    "heuristic": AgentEntry(_heuristic, _heuristic_options(),
                            "colour-blob vision baseline: food first, avoid red, explore"),
    "oracle": AgentEntry(_oracle, frozenset({"budget", "control"}),
                         "privileged search in the simulator (a ceiling): plans by simulating "
                         "from exact snapshots"),
    "oracle-frames": AgentEntry(_oracle_frames, frozenset({"budget", "control"}),
                                "the oracle acting per step with no script cap (the ceiling "
                                "of what the physics allows); plays --control action",
                                Preset("model", "oracle-frames",
                                       defaults={"modes.control": "action",
                                                 "protocol.max_scripts": None,
                                                 "protocol.max_replies":
                                                     ORACLE_FRAMES_MAX_REPLIES},
                                       requires={"modes.control": "action",
                                                 "protocol.max_scripts": None},
                                       why="acts per step, with no script cap: give "
                                           "{modes.control} action and bound it with "
                                           "{protocol.max_replies}")),
    "random": AgentEntry(_random, frozenset({"max_go", "max_commands", "control"}),
                         "seeded random Go/Turn scripts"),
    "human": AgentEntry(_human, frozenset({"input_stream", "output_stream", "frame_dir"}),
                        "type scripts at the terminal after looking at the saved frame"),
    "replay": AgentEntry(_replay, frozenset({"scripts", "replay_from"}),
                         "re-issue the scripts of a logged episode",
                         Preset("model", "replay", requires={"replay_from": SET},
                                why="needs {replay_from} EPISODE_DIR (the scripts to "
                                    "re-issue)")),
}

#: options that configure the model client.
CLIENT_OPTIONS = frozenset({"api_base", "api_key", "temperature", "max_tokens", "timeout_s",
                            "max_retries", "max_concurrent", "requests_per_minute",
                            "retry_policy", "extra_params", "seed", "price_per_mtok"})
#: every option a model agent accepts (client options plus LLMAgent options).
MODEL_OPTIONS = CLIENT_OPTIONS | {"keep_last_images", "keep_last_turns", "prompt_caching",
                                  "image_placeholder", "fold_system_prompt"}


def agent_preset(name: str) -> Preset | None:
    """What the agent ``name`` brings to a run's settings (None: a model, or nothing)."""
    entry = AGENTS.get(name)
    return entry.preset if entry is not None else None


def register_agent(name: str, entry: AgentEntry) -> None:
    """Add a named agent; names must not shadow built-ins or model aliases."""
    if name in AGENTS or name in MODEL_ALIASES:
        raise ValueError(f"agent name {name!r} is already taken")
    AGENTS[name] = entry


@dataclass(frozen=True)
class AgentSpec:
    """A validated agent choice; ``create()`` builds a fresh agent for one episode.

    Attributes:
        name: what the user asked for (``heuristic``, ``claude``, ``openai/gpt-4o``...).
        kind: ``"builtin"`` or ``"model"``.
        options: the options the agent is built with (``api_key`` never shown).

    """

    name: str
    kind: str
    options: Mapping[str, Any] = field(repr=False)
    _factory: Callable[..., Agent] = field(repr=False, compare=False)

    def create(self) -> Agent:
        """Build a new agent (call once per episode; agents keep per-episode state)."""
        return self._factory(**self.options)

    @property
    def label(self) -> str:
        """What the name means, for people: the model an alias stands for, or "built-in"."""
        if self.kind != "model":
            return f"{self.name} (built-in agent)"
        model = resolve_model(self.name).litellm_model
        return self.name if model == self.name else f"{self.name} = {model}"

    def describe(self) -> dict[str, Any]:
        """JSON-safe description for the run manifest, without secrets."""
        shown: dict[str, Any] = {}
        for key, value in self.options.items():
            if key == "api_key":
                shown[key] = "<set>"
            elif key in ("input_stream", "output_stream", "scripts"):
                shown[key] = f"<{type(value).__name__}>"
            else:
                shown[key] = value if isinstance(value, str | int | float | bool) else repr(value)
        info: dict[str, Any] = {"name": self.name, "kind": self.kind, "options": shown}
        if self.kind == "model":
            spec = resolve_model(self.name)
            info.update(litellm_model=spec.litellm_model, alias=spec.alias,
                        provider=spec.provider, api_key_env=spec.api_key_env)
        return info


def resolve_agent(name: str, *, check_key: bool = True, **options: Any) -> AgentSpec:
    """Validate an agent name and its options; check the API key for models.

    Options that are None are treated as not given. Options meant for the other kind of
    agent (e.g. ``temperature`` for ``heuristic``, ``replay_from`` for a model) are
    dropped, so a CLI can pass all its flags; anything else unknown is an error.

    Args:
        name: a built-in agent, a model alias or a litellm model string.
        check_key: False for a plan that calls no model (``run --dry-run``): a cost
            estimate comes before buying a key.
        **options: the agent's options.

    Raises:
        MissingAPIKey: the model's provider needs a key that is not set (``check_key``).
        TypeError: an option no agent knows.

    """
    given = {key: value for key, value in options.items() if value is not None}
    every_builtin = frozenset().union(*(entry.options for entry in AGENTS.values()))
    entry = AGENTS.get(name)
    if entry is not None:
        allowed, ignorable = entry.options, MODEL_OPTIONS | every_builtin
        kind, factory = "builtin", entry.factory
    else:
        allowed, ignorable = MODEL_OPTIONS, every_builtin
        kind, factory = "model", _model_factory(name, given, check_key)
    unknown = sorted(set(given) - allowed - ignorable)
    if unknown:
        raise TypeError(f"agent {name!r} does not take options {unknown}")
    kept = {key: value for key, value in given.items() if key in allowed}
    return AgentSpec(name, kind, MappingProxyType(kept), factory)


def _model_factory(name: str, options: Mapping[str, Any],
                   check_key: bool = True) -> Callable[..., Agent]:
    try:
        spec = resolve_model(name)
    except ValueError as error:
        raise ValueError(f"{error}{_builtin_hint(name)}") from error
    if check_key:
        check_credentials(spec, options.get("api_base"), options.get("api_key"))

    def build(**kept: Any) -> Agent:
        client = {k: v for k, v in kept.items() if k in CLIENT_OPTIONS}
        agent = {k: v for k, v in kept.items() if k not in CLIENT_OPTIONS}
        return LLMAgent(LiteLLMClient(name, **client), **agent)

    return build


def _builtin_hint(name: str) -> str:
    """Point a name that is no model at the built-in agent it was probably meant to be."""
    import difflib

    if "/" in name:
        return ""
    known = {known.lower(): known for known in (*AGENTS, *MODEL_ALIASES)}
    close = difflib.get_close_matches(name.lower(), known, n=1, cutoff=0.7)
    if close:
        return f"; did you mean {known[close[0]]!r}?"
    return f"; built-in agents: {', '.join(AGENTS)}"


def make_agent(name: str, **options: Any) -> Agent:
    """Build one agent by name (``resolve_agent(name, **options).create()``)."""
    return resolve_agent(name, **options).create()
