"""Prompt templates, loaded by name from package data so installed copies find them.

The templates are plain files next to this module (``react_system.md`` and
``react_turns.yaml``): editing a prompt never means editing Python. They are package
data, so they load identically from a source checkout, an editable install and a wheel.
Any other ``.md`` file can be used by passing its path instead of a registered name.
Each prompt carries the SHA-256 of its exact text, which the runner stores in the run
manifest so results are tied to the words the model actually read.

Experiment 2 (``icl``) adds a worked example (``llm_aai.prompts.examples``): the ReAct
background prompt plus a short introduction, and a ``prelude`` of recorded exchanges
(pictures, health, scripts) that the agent reads before its episode. The example's name and
hash go into the manifest with the prompt's.
"""

from __future__ import annotations

import hashlib
import string
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any

import yaml

from llm_aai.agents.base import PriorTurn
from llm_aai.prompts.examples import Example, load_example
from llm_aai.protocol.presets import Preset

__all__ = [
    "DEFAULT_EXAMPLE",
    "PROMPTS",
    "TURN_FIELDS",
    "Prompt",
    "PromptSpec",
    "TurnMessages",
    "PLAN_PROMPT",
    "load_prompt",
    "prompt_spec",
    "load_prompt_set",
    "load_turn_messages",
    "register_prompt",
]


@dataclass(frozen=True)
class PromptSpec:
    """Where a named prompt's files live inside this package.

    Attributes:
        system: the background prompt file.
        turns: the per-turn message file.
        description: one line for ``--help`` listings.
        intro: a file appended to the system prompt (after a blank line), if any.
        example: the worked example (a name under ``llm_aai/prompts/worked_examples`` or a
            folder) whose exchanges open the conversation, if any.
        arena_map: the first message carries a map of the arena
            (``llm_aai.perception.arena_map``).
        preset: the settings the prompt plays with (the plan prompt's one script); None: any.

    """

    system: str
    turns: str
    description: str
    intro: str | None = None
    example: str | None = None
    arena_map: bool = False
    preset: Preset | None = None


#: The worked example the ``icl`` prompt shows (a folder under ``llm_aai/prompts/worked_examples``).
DEFAULT_EXAMPLE = "tutorial-v1"

#: name -> files. Experiment 1 (ReAct) and experiment 2 (ReAct plus a worked example).
PROMPTS: dict[str, PromptSpec] = {
    "react": PromptSpec("react_system.md", "react_turns.yaml",
                        "experiment 1: background prompt with ReAct-style Think commands"),
    "icl": PromptSpec("react_system.md", "react_turns.yaml",
                      "experiment 2: the ReAct prompt plus a worked example played before the "
                      "episode (supervised in-context learning)",
                      intro="icl_intro.md", example=DEFAULT_EXAMPLE),
    "react-frame": PromptSpec("frame_system.md", "frame_turns.yaml",
                              "per-action control (--control action): the same background, "
                              "one named action per reply"),
    "plan": PromptSpec("react_system.md", "react_turns.yaml",
                       "plan-then-act probe: a map of the arena and one picture, one complete "
                       "program executed open-loop", intro="plan_intro.md", arena_map=True,
                       preset=Preset("prompt", "plan", fixed={"protocol.max_scripts": 1})),
}
PLAN_PROMPT = "plan"
"""The prompt of the plan-then-act probe: its first message carries the arena's map, and the
episode takes one reply (``llm_aai.perception.arena_map``)."""

#: turn message -> the fields its template may use.
TURN_FIELDS: dict[str, frozenset[str]] = {
    "preamble": frozenset(),
    "initial": frozenset({"health"}),
    "observation": frozenset({"health"}),
    "invalid_reply": frozenset({"error"}),
    "episode_end": frozenset({"reward", "health"}),
    "image_placeholder": frozenset(),
}


def prompt_spec(name: str) -> PromptSpec:
    """What a prompt declares: a registered one's spec; a prompt file declares nothing."""
    return PROMPTS.get(name) or _A_FILE


_A_FILE = PromptSpec("", "", "a prompt file")


def register_prompt(name: str, spec: PromptSpec) -> None:
    """Add a named prompt (files must sit in this package directory)."""
    if name in PROMPTS:
        raise ValueError(f"prompt {name!r} is already registered")
    PROMPTS[name] = spec


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class TurnMessages:
    """The fixed sentences the runner sends around each observation.

    Attributes:
        templates: message name -> ``str.format`` template (see :data:`TURN_FIELDS`).
        sha256: hash of the source file's text, for the run manifest.

    """

    templates: Mapping[str, str]
    sha256: str

    @property
    def preamble(self) -> str:
        """Text sent before the image(s) of a turn ("Observation captured.")."""
        return self.templates["preamble"]

    @property
    def image_placeholder(self) -> str:
        """Stands in for an image dropped by the keep-last-K option."""
        return self.templates["image_placeholder"]

    def initial(self, health: float) -> str:
        """Render the text after the opening pictures of a level."""
        return self.templates["initial"].format(health=health)

    def observation(self, health: float) -> str:
        """Render the text after the picture taken at the end of a script."""
        return self.templates["observation"].format(health=health)

    def invalid_reply(self, error: str) -> str:
        """Render the feedback for a reply that could not be parsed."""
        return self.templates["invalid_reply"].format(error=error)

    def episode_end(self, reward: float, health: float) -> str:
        """Render the end-of-level message."""
        return self.templates["episode_end"].format(reward=reward, health=health)


@dataclass(frozen=True)
class Prompt:
    """A background prompt, its hash and the turn messages that go with it.

    Attributes:
        name: registered name, or the file path it was read from.
        text: the exact system prompt sent to the model.
        sha256: SHA-256 of ``text`` (UTF-8).
        messages: the per-turn messages.
        example: the worked example, if the prompt has one.

    """

    name: str
    text: str
    sha256: str
    messages: TurnMessages
    example: Example | None = field(default=None, compare=False)

    @property
    def prelude(self) -> tuple[PriorTurn, ...]:
        """The worked example as exchanges to put before the episode (empty without one).

        Pass it to ``agent.start_episode(system_text, seed, prelude=prompt.prelude)``.
        """
        return () if self.example is None else self.example.prelude()

    @property
    def system_text(self) -> str:
        """The system prompt (same as ``text``)."""
        return self.text

    def manifest(self) -> dict[str, Any]:
        """What a run manifest records about the prompt: name, hash, text and the extras.

        Resuming a run compares these hashes with the prompt it would use now.
        """
        return {"name": self.name, "sha256": self.sha256, "system_text": self.system_text,
                **self.extra_manifest()}

    def extra_manifest(self) -> dict[str, Any]:
        """Return what the run manifest records besides name, hash and text."""
        extra: dict[str, Any] = {"turn_messages": dict(self.messages.templates),
                                 "turn_messages_sha256": self.messages.sha256}
        if self.example is not None:
            extra["example"] = self.example.manifest()
        return extra

    def __repr__(self) -> str:
        example = "" if self.example is None else f", example={self.example.name!r}"
        return (f"Prompt(name={self.name!r}, sha256={self.sha256[:12]}..., "
                f"chars={len(self.text)}{example})")


def _read_package_file(filename: str) -> str:
    return resources.files(__name__).joinpath(filename).read_text(encoding="utf-8")


def _fields(template: str) -> set[str]:
    return {field for _, field, _, _ in string.Formatter().parse(template) if field}


def _parse_turns(text: str, source: str) -> TurnMessages:
    data: Any = yaml.safe_load(text)
    if not isinstance(data, dict):
        raise ValueError(f"{source}: expected a mapping of message names to strings")
    missing = sorted(set(TURN_FIELDS) - set(data))
    unknown = sorted(set(data) - set(TURN_FIELDS))
    if missing or unknown:
        raise ValueError(f"{source}: missing messages {missing}, unknown messages {unknown}")
    for key, allowed in TURN_FIELDS.items():
        value = data[key]
        if not isinstance(value, str):
            raise ValueError(f"{source}: field {key!r} must be a string, got {value!r}")
        extra = _fields(value) - allowed
        if extra:
            raise ValueError(f"{source}: field {key!r} uses unknown placeholders {sorted(extra)}; "
                             f"allowed: {sorted(allowed)}")
    templates = MappingProxyType({key: data[key] for key in TURN_FIELDS})
    return TurnMessages(templates, _sha256(text))


def load_turn_messages(name: str = "react") -> TurnMessages:
    """Load a registered prompt's per-turn messages."""
    spec = _spec(name)
    return _parse_turns(_read_package_file(spec.turns), f"llm_aai/prompts/{spec.turns}")


def _spec(name: str) -> PromptSpec:
    try:
        return PROMPTS[name]
    except KeyError:
        raise KeyError(f"unknown prompt {name!r}; registered: {', '.join(sorted(PROMPTS))} "
                       f"(or pass the path of a .md file)") from None


def load_prompt(name_or_path: str | Path = "react", *, turns: str = "react",
                example: str | Path | None = None) -> Prompt:
    """Load a background prompt by registered name or from a ``.md`` file path.

    Args:
        name_or_path: a name in :data:`PROMPTS`, or a path to your own prompt file.
        turns: which registered turn templates go with a prompt loaded from a path.
        example: a worked example (name under ``llm_aai/prompts/worked_examples`` or folder) to use
            instead of the registered prompt's own; with a prompt file, adds one.

    Raises:
        KeyError: unknown prompt name.
        FileNotFoundError: missing prompt file.
        llm_aai.prompts.examples.ExampleError: the example is missing or corrupt.

    """
    candidate = Path(name_or_path)
    if str(name_or_path) not in PROMPTS and candidate.suffix == ".md":
        if not candidate.is_file():
            raise FileNotFoundError(f"prompt file not found: {candidate}")
        text = candidate.read_text(encoding="utf-8")
        return Prompt(str(candidate), text, _sha256(text), load_turn_messages(turns),
                      _load_example(example))
    name = str(name_or_path)
    spec = _spec(name)
    text = _read_package_file(spec.system)
    if spec.intro is not None:
        text = text.rstrip("\n") + "\n\n" + _read_package_file(spec.intro)
    chosen = example if example is not None else spec.example
    return Prompt(name, text, _sha256(text), load_turn_messages(name), _load_example(chosen))


def _load_example(example: str | Path | None) -> Example | None:
    if example is None:
        return None

    return load_example(example)


#: The runner's name for :func:`load_prompt`: a prompt together with its turn messages.
load_prompt_set = load_prompt
