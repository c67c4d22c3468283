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

__all__ = ["Agent", "AgentReply", "PriorTurn", "TurnInput"]


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
    """One exchange from before the episode's first turn, shown to the agent first.

    Two kinds of history open a conversation, and both are this type: the worked example of
    experiment 2 (in-context learning), a recorded demonstration whose frames are decoded
    images (``turn.images``), and, with ``--context across-tasks``, the turns of the tasks
    played earlier in the same conversation, read back from their logs with their frames as
    the files that were sent (``turn.image_paths``, no images decoded), so an agent that keeps
    a conversation can send them again byte for byte. Either way the exchange is in exactly
    the form the runner uses for a live turn, so the model reads it as its own earlier turn.

    Attributes:
        turn: what was shown (preamble, images or their files, text).
        reply: the script given in answer.

    """

    turn: TurnInput
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
        unanswered_cost_usd: what the budget charged for tries sent before this reply that
            got no usable reply (timed out): an estimate, apart from ``cost_usd``.

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
    unanswered_cost_usd: float = 0.0


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


def continue_conversation(agent: Agent, earlier: Sequence[PriorTurn]) -> None:
    """Give ``agent`` the earlier tasks of its conversation, after ``start_episode``.

    Agents that keep a conversation (``LLMAgent``) define ``continue_conversation`` and put
    the exchanges after the system prompt and any worked example; the built-in agents keep no
    conversation and play each task afresh, so they have nothing to take.
    """
    method = getattr(agent, "continue_conversation", None)
    if method is not None:
        method(earlier)
