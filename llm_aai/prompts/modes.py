"""The prompt a run's mode is played with: the control's wording, and the frames' line.

``--control action`` plays ``react`` as ``react-frame`` (the same background, with the nine
actions instead of the script language); the worked example of ``icl`` is a scripted
demonstration, so it has no frame version and is refused rather than shown as scripts.
Under ``--observation text`` or ``both`` the worked example is shown in words too.
``--observe-every`` appends a note on the extra pictures to the system prompt and adds the
line that goes with them to the turn messages; both are hashed into the manifest's prompt
record, as the prompt itself is. ``--context across-tasks`` appends a note on the levels that
follow each other in one conversation, and adds the line that opens each level after the first
(the last level's outcome) to the turn messages (``next_level_line``).
"""

from __future__ import annotations

import dataclasses
import hashlib
from importlib import resources
from pathlib import Path
from types import MappingProxyType

import yaml

from llm_aai.perception.observer import IMAGE_ONLY, ObservationMode
from llm_aai.prompts import Prompt, TurnMessages, load_prompt_set
from llm_aai.prompts.text_example import example_in_words
from llm_aai.protocol.modes import ModeSettings

__all__ = ["FRAME_PROMPTS", "frames_line", "load_prompt_for_mode", "next_level_line",
           "prompt_name_for_mode"]

FRAME_PROMPTS = {"react": "react-frame"}
"""Prompt name -> its frame-control version."""
_SCRIPT_ONLY = {"icl": "its worked example is a scripted demonstration"}
_OBSERVE_EVERY = "observe_every.yaml"
_ACROSS_TASKS = "across_tasks.yaml"


def prompt_name_for_mode(name: str, modes: ModeSettings) -> str:
    """The prompt to load for ``name`` under ``modes``.

    Raises:
        ValueError: the prompt has no version for the mode's control.

    """
    if modes.control == "action":
        if name in _SCRIPT_ONLY:
            raise ValueError(f"--prompt {name} cannot be played with --control action: "
                             f"{_SCRIPT_ONLY[name]}; use --prompt react or a prompt file")
        return FRAME_PROMPTS.get(name, name)
    if name in FRAME_PROMPTS.values():
        raise ValueError(f"--prompt {name} describes per-action control; add "
                         "--control action")
    return name


def load_prompt_for_mode(name: str, modes: ModeSettings, example: Path | None = None,
                         observation: ObservationMode = IMAGE_ONLY) -> Prompt:
    """Load the prompt ``name`` as played under ``modes`` (see the module docstring).

    Its worked example, if any, is shown as the run shows the world: in words under
    ``--observation text`` or ``both`` (``llm_aai.prompts.text_example``).
    """
    chosen = prompt_name_for_mode(name, modes)
    prompt = load_prompt_set(chosen, example=example) if example else load_prompt_set(chosen)
    if prompt.example is not None and observation.text:
        prompt = dataclasses.replace(prompt, example=example_in_words(prompt.example,
                                                                      observation))
    if modes.observe_every is not None:
        prompt = _with_note(prompt, _OBSERVE_EVERY, {"every": modes.observe_every},
                            {"frames_during": "frames", "filmstrip": "filmstrip"})
    if modes.across_tasks:
        prompt = _with_note(prompt, _ACROSS_TASKS, {},
                            {"next_level": "next_level", "level_passed": "passed",
                             "level_failed": "failed"})
    return prompt


def _with_note(prompt: Prompt, source_file: str, note_fields: dict[str, object],
               templates: dict[str, str]) -> Prompt:
    """``prompt`` with a mode's note appended to its system text and its lines added.

    Args:
        prompt: the prompt so far.
        source_file: the mode's YAML file in this package (``system_note`` and the lines).
        note_fields: what fills the note's placeholders.
        templates: turn-message name -> the file's key holding its template.

    """
    source = resources.files(__package__).joinpath(source_file).read_text(encoding="utf-8")
    extra = yaml.safe_load(source)
    text = (prompt.text.rstrip("\n") + "\n\n"
            + extra["system_note"].format(**note_fields) + "\n")
    merged = {**prompt.messages.templates, **{name: extra[key] for name, key in templates.items()}}
    messages = TurnMessages(MappingProxyType(merged), _sha256(prompt.messages.sha256 + source))
    return dataclasses.replace(prompt, text=text, sha256=_sha256(text), messages=messages)


def frames_line(messages: TurnMessages, steps: tuple[int, ...], *, filmstrip: bool) -> str:
    """The line that says after which steps the frames of a reply were taken."""
    listed = (f"step {steps[0]}" if len(steps) == 1 else
              "steps " + ", ".join(str(step) for step in steps[:-1]) + f" and {steps[-1]}")
    return messages.templates["filmstrip" if filmstrip else "frames_during"].format(steps=listed)


def next_level_line(messages: TurnMessages, *, reward: float, health: float, passed: bool,
                    position: int, count: int) -> str:
    """The line that opens level ``position`` of ``count`` with the last level's outcome.

    The outcome is the end message the per-task protocol logs when a level ends (its reward
    and final health), followed by whether the level was passed.
    """
    templates = messages.templates
    verdict = templates["level_passed" if passed else "level_failed"]
    return templates["next_level"].format(outcome=messages.episode_end(reward, health),
                                          verdict=verdict, position=position, count=count)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
