"""An agent backed by a chat model, following the paper's conversation protocol.

The whole conversation (system prompt, every turn's text and images, every reply) is
kept and sent on each turn, so the model sees all previous states and scripts. A worked
example (experiment 2) is put right after the system prompt as earlier user/assistant
exchanges. Two options beyond the paper, off by default, trade fidelity for cost: keep only
the last K images, and mark Anthropic prompt-caching breakpoints.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from llm_aai.agents.base import AgentReply, PriorTurn, TurnInput
from llm_aai.frames import file_data_url
from llm_aai.llm.client import ChatClient
from llm_aai.llm.types import (
    Message,
    assistant_message,
    system_message,
    text_part,
    user_message,
)

__all__ = ["DEFAULT_IMAGE_PLACEHOLDER", "LLMAgent"]

DEFAULT_IMAGE_PLACEHOLDER = "[an earlier picture was removed here to keep the conversation short]"
_CACHE = {"type": "ephemeral"}


class LLMAgent:
    """Sends the full history to a :class:`~llm_aai.llm.client.ChatClient` each turn.

    Args:
        client: the model client (``LiteLLMClient`` or anything with ``complete``).
        keep_last_images: if set, only the last K images are sent; older ones are
            replaced by ``image_placeholder`` (the stored history keeps them all).
        keep_last_turns: if set, only the last N turns (a message and its reply) after the
            prompt and worked example are sent (the stored history keeps them all), so a
            conversation fits a small context window.
        prompt_caching: add Anthropic ``cache_control`` breakpoints on the system prompt
            and the latest user message; only applied to ``anthropic/`` models.
        image_placeholder: the text that stands in for a dropped image.
        name: agent name for logs; defaults to the client's model.
        fold_system_prompt: send the system prompt at the head of the first user message
            instead of as a system message: some chat templates (Gemma's, for one) have no
            system role, and a server using one may drop the system prompt without a word.

    """

    def __init__(
        self,
        client: ChatClient,
        *,
        keep_last_images: int | None = None,
        keep_last_turns: int | None = None,
        prompt_caching: bool = False,
        image_placeholder: str = DEFAULT_IMAGE_PLACEHOLDER,
        name: str | None = None,
        fold_system_prompt: bool = False,
    ) -> None:
        if keep_last_images is not None and keep_last_images < 0:
            raise ValueError(f"keep_last_images must be >= 0, got {keep_last_images}")
        self.client = client
        self.name = name or client.model
        self.keep_last_images = keep_last_images
        if keep_last_turns is not None and keep_last_turns < 1:
            raise ValueError(f"keep_last_turns must be >= 1, got {keep_last_turns}")
        self.keep_last_turns = keep_last_turns
        self.prompt_caching = prompt_caching
        self.fold_system_prompt = fold_system_prompt
        self.image_placeholder = image_placeholder
        self.messages: list[Message] = []
        self._prelude_end = 0

    def __repr__(self) -> str:
        return (f"LLMAgent(client={self.client!r}, keep_last_images={self.keep_last_images}, "
                f"prompt_caching={self.prompt_caching})")

    def start_episode(self, system_prompt: str, seed: int,
                      prelude: Sequence[PriorTurn] = ()) -> None:
        """Start a fresh conversation with ``system_prompt``, then the ``prelude``.

        ``seed`` is unused: sampling randomness belongs to the provider (temperature 0 by
        default), and the paper gave the model no memory across episodes. Each prelude
        exchange becomes a user message built exactly like a live turn's (preamble, images,
        text) followed by the recorded script as the assistant's reply, so the episode's
        first observation follows a finished demonstration.
        """
        self.messages = [system_message(system_prompt)]
        for prior in prelude:
            shown = prior.turn
            self.messages.append(user_message(shown.text, shown.images, preamble=shown.preamble))
            self.messages.append(assistant_message(prior.reply))
        self._prelude_end = len(self.messages) - 1

    def continue_conversation(self, earlier: Sequence[PriorTurn]) -> None:
        """Put the earlier tasks of this conversation after the prompt (``--context across-tasks``).

        Each exchange becomes a user message built as the live turn was (preamble, the frame
        files sent, text) and the reply that answered it, so the model is sent the same
        history whether the earlier tasks were played in this process or read back from their
        logs on resume. The prompt-caching mark for the prelude moves to their end: every
        turn of this task shares that prefix.
        """
        if not self.messages:
            raise RuntimeError("call start_episode before continue_conversation")
        for prior in earlier:
            shown = prior.turn
            images = [file_data_url(path) for path in shown.image_paths]
            self.messages.append(user_message(shown.text, images, preamble=shown.preamble))
            self.messages.append(assistant_message(prior.reply))
        self._prelude_end = len(self.messages) - 1

    def act(self, turn: TurnInput) -> AgentReply:
        """Append this turn, send the history, record and return the reply.

        If the call fails the turn is taken back out, so the history never holds a
        question without its answer.
        """
        if not self.messages:
            raise RuntimeError("call start_episode before act")
        self.messages.append(user_message(turn.text, _encoded_images(turn), preamble=turn.preamble))
        try:
            response = self.client.complete(self.outgoing_messages())
        except BaseException:
            self.messages.pop()
            raise
        self.messages.append(assistant_message(response.text))
        return AgentReply(
            text=response.text, model=response.model, input_tokens=response.input_tokens,
            output_tokens=response.output_tokens, cost_usd=response.cost_usd,
            latency_s=response.latency_s, retries=response.retries,
            finish_reason=response.raw_finish_reason, cost_known=response.cost_known,
            notes=response.notes, unanswered_cost_usd=response.unanswered_cost_usd,
        )

    def outgoing_messages(self) -> list[Message]:
        """Return the history as it will be sent, after the image and caching options."""
        messages = self.messages
        if self.keep_last_turns is not None:
            messages = _last_turns(messages, self._prelude_end + 1, self.keep_last_turns)
        if self.fold_system_prompt:
            messages = _system_prompt_folded(messages)
        if self.keep_last_images is not None:
            messages = _drop_old_images(messages, self.keep_last_images,
                                        self.image_placeholder)
        if self.prompt_caching and self.client.model.startswith("anthropic/"):
            messages = _with_cache_breakpoints(messages, self._prelude_end)
        return messages


def _last_turns(messages: list[Message], kept_head: int, turns: int) -> list[Message]:
    """The first ``kept_head`` messages, then the last ``turns`` turns.

    Each turn starts at a user message; the last is the message being sent, still without
    its reply.
    """
    starts = [i for i in range(kept_head, len(messages)) if messages[i].get("role") == "user"]
    if len(starts) <= turns:
        return messages
    return messages[:kept_head] + messages[starts[-turns]:]


def _system_prompt_folded(messages: list[Message]) -> list[Message]:
    """The messages with the system prompt moved to the head of the first user message."""
    if not messages or messages[0].get("role") != "system":
        return messages
    system, rest = messages[0]["content"], list(messages[1:])
    first = next((i for i, message in enumerate(rest) if message.get("role") == "user"), None)
    if first is None:
        return [{"role": "user", "content": system}, *rest]
    content = rest[first]["content"]  # the system prompt is text (``system_message``)
    folded: Any = (f"{system}\n\n{content}" if isinstance(content, str)
                   else [text_part(system), *content])
    rest[first] = {**rest[first], "content": folded}
    return rest


def _drop_old_images(messages: list[Message], keep: int, placeholder: str) -> list[Message]:
    """Copy of ``messages`` where all but the last ``keep`` images are placeholders."""
    result: list[Message] = []
    remaining = keep
    for message in reversed(messages):
        content = message.get("content")
        if not isinstance(content, list):
            result.append(message)
            continue
        parts: list[dict[str, Any]] = []
        for part in reversed(content):
            if part.get("type") == "image_url":
                if remaining > 0:
                    remaining -= 1
                    parts.append(part)
                else:
                    parts.append(text_part(placeholder))
            else:
                parts.append(part)
        result.append({**message, "content": parts[::-1]})
    return result[::-1]


def _with_cache_breakpoints(messages: list[Message], prelude_end: int = 0) -> list[Message]:
    """Mark the system prompt, the end of the prelude and the newest user message.

    Anthropic caches everything up to a marked block; with the history growing by one
    turn each call, these marks let every call reuse the previous call's prefix, and the
    prelude mark lets every episode of a run reuse the worked example (same for all).
    """
    marked = [dict(m) for m in messages]
    targets = [0] if marked and marked[0]["role"] == "system" else []
    if 0 < prelude_end < len(marked):
        targets.append(prelude_end)
    last_user = max((i for i, m in enumerate(marked) if m["role"] == "user"), default=None)
    if last_user is not None:
        targets.append(last_user)
    for index in targets:
        content = marked[index]["content"]
        parts = ([text_part(content)] if isinstance(content, str)
                 else list(content))
        if parts:
            parts[-1] = {**parts[-1], "cache_control": dict(_CACHE)}
        marked[index] = {**marked[index], "content": parts}
    return marked


def _encoded_images(turn: TurnInput) -> Sequence[np.ndarray | str]:
    """Send the frame files the runner saved, byte for byte, instead of encoding them again."""
    if turn.image_paths and len(turn.image_paths) == len(turn.images):
        return [file_data_url(path) for path in turn.image_paths]
    return turn.images
