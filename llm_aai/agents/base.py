"""The agent interface shared by LLM and non-LLM agents.

Agents answer with script TEXT, never with parsed commands: the runner parses every reply
with ``llm_aai.script.parse_script``, so a baseline's output goes through the same
grammar, the same feedback path for invalid replies and the same logs as a model's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

__all__ = ["Agent", "AgentReply", "EarlierTurn", "PriorTurn", "TurnInput"]


@dataclass(frozen=True)
class TurnInput:
    """What the runner shows the agent on one turn.

    The message reads: ``preamble``, then the images in order, then ``text``. On the first
    turn there are three images; afterwards one.

    Attributes:
        images: RGB frames, (H, W, 3) uint8.
        text: the text after the images (health line, feedback on an invalid reply...).
        preamble: the text before the images ("Observation captured.").
        image_paths: where the runner saved the frames, if it did (shown to humans).

    """

    images: Sequence[np.ndarray]
    text: str
    preamble: str = ""
    image_paths: Sequence[Path] = field(default=())

    def __post_init__(self) -> None:
        object.__setattr__(self, "images", tuple(self.images))
        object.__setattr__(self, "image_paths", tuple(Path(p) for p in self.image_paths))
        for image in self.images:
            if not (isinstance(image, np.ndarray) and image.ndim == 3 and image.shape[2] >= 3):
                shape = getattr(image, "shape", type(image).__name__)
                raise ValueError(f"TurnInput images must be (H, W, 3) arrays, got {shape}")


@dataclass(frozen=True)
class PriorTurn:
    """One exchange of a worked example, shown to the agent before its episode starts.

    Experiment 2 (in-context learning) opens the conversation with a recorded
    demonstration: each exchange is what a player was shown and the script it answered,
    in exactly the form the runner uses for a live turn, so the model reads the example
    as an earlier conversation of its own.

    Attributes:
        turn: what was shown (preamble, images, health text).
        reply: the script given in answer.

    """

    turn: TurnInput
    reply: str


@dataclass(frozen=True)
class EarlierTurn:
    """One exchange of an earlier task of the same conversation, as its log kept it.

    With ``--context across-tasks`` a task's conversation opens with the tasks played before
    it. Their frames are the files that were sent, so an agent that keeps a conversation can
    send them again byte for byte (and need not hold hundreds of decoded images).

    Attributes:
        preamble: the text sent before the images.
        image_paths: the frame files sent, in order.
        text: the text sent after the images.
        reply: the agent's reply.

    """

    preamble: str
    image_paths: tuple[Path, ...]
    text: str
    reply: str


@dataclass(frozen=True)
class AgentReply:
    """One reply with its accounting (all zero for agents that call no model).

    Attributes:
        text: the script text to parse.
        model: which model or agent produced it.
        input_tokens: prompt tokens billed.
        output_tokens: completion tokens billed.
        cost_usd: estimated cost; 0.0 if unknown (see ``cost_known``).
        latency_s: time spent producing the reply, retry waits excluded.
        retries: failed model calls before this reply.
        finish_reason: the provider's finish reason, if any.
        cost_known: False when the provider's price is unknown.
        notes: what the model client changed in the reply (logged with the turn).

    """

    text: str
    model: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0
    retries: int = 0
    finish_reason: str | None = None
    cost_known: bool = True
    notes: tuple[str, ...] = ()


@runtime_checkable
class Agent(Protocol):
    """Plays one episode at a time: reset with ``start_episode``, then one ``act`` per turn."""

    name: str

    def start_episode(self, system_prompt: str, seed: int,
                      prelude: Sequence[PriorTurn] = ()) -> None:
        """Forget the previous episode; ``seed`` makes any randomness reproducible.

        ``prelude`` is a worked example to read before the episode (experiment 2). Agents
        that keep a conversation put it first; agents without one ignore it.
        """
        ...

    def act(self, turn: TurnInput) -> AgentReply:
        """Return the next script as text."""
        ...


def continue_conversation(agent: Agent, earlier: Sequence[EarlierTurn]) -> None:
    """Give ``agent`` the earlier tasks of its conversation, after ``start_episode``.

    Agents that keep a conversation (``LLMAgent``) define ``continue_conversation`` and put
    the exchanges after the system prompt and any worked example; the built-in agents keep no
    conversation and play each task afresh, so they have nothing to take.
    """
    method = getattr(agent, "continue_conversation", None)
    if method is not None:
        method(earlier)
