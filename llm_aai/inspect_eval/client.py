"""Inspect's model behind the runner's ``ChatClient``, so ``LLMAgent`` builds every message.

The runner plays an episode synchronously in a worker thread; each ``complete`` hands the
conversation (in the OpenAI form ``LLMAgent`` builds) to Inspect's model on the event loop
and waits for its reply. The sample's messages are kept equal to the conversation sent, so
``inspect view`` shows every picture, script, feedback line and health the model saw.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import anyio.from_thread
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    Content,
    ContentImage,
    ContentText,
    Model,
)

from llm_aai.inspect_eval.tokenizer import TokenizerOffline, raised_by_tiktoken, tokenizer_hint
from llm_aai.llm.errors import ContextOverflow
from llm_aai.llm.types import LLMResponse, Message

__all__ = ["InspectClient", "to_inspect_messages"]

_FINISH_REASONS = {"max_tokens": "length"}
"""Inspect's stop reasons in the OpenAI spelling the runner reads (a reply cut at its token
limit gets the cut-reply feedback, as in ``python -m llm_aai.run``)."""


def _content(content: str | Sequence[dict[str, Any]]) -> str | list[Content]:
    if isinstance(content, str):
        return content
    parts: list[Content] = []
    for part in content:
        if part["type"] == "text":
            parts.append(ContentText(text=part["text"]))
        elif part["type"] == "image_url":
            parts.append(ContentImage(image=part["image_url"]["url"]))
        else:
            raise ValueError(f"a message part of type {part['type']!r} has no Inspect form")
    return parts


_ROLES = {"system": ChatMessageSystem, "user": ChatMessageUser,
          "assistant": ChatMessageAssistant}


def to_inspect_messages(messages: Sequence[Message]) -> list[ChatMessage]:
    """The conversation as Inspect's chat messages (text parts and images in their order)."""
    return [_ROLES[m["role"]](content=_content(m["content"])) for m in messages]


class InspectClient:
    """A ``ChatClient`` that asks an Inspect model, from a thread the event loop started.

    Args:
        model: the sample's model (``inspect_ai.model.get_model()``).
        transcript: the list the conversation is mirrored into (the sample's
            ``TaskState.messages``); each call replaces its contents with what was sent and
            the reply.

    """

    def __init__(self, model: Model, transcript: list[ChatMessage]):
        self._model = model
        self.model = str(model)
        self._transcript = transcript

    def complete(self, messages: Sequence[Message]) -> LLMResponse:
        """Send the conversation to the model and return its reply with the tokens it used."""
        sent = to_inspect_messages(messages)
        started = time.monotonic()
        try:
            output = anyio.from_thread.run(self._model.generate, sent)
        except Exception as error:
            if raised_by_tiktoken(error):
                raise TokenizerOffline(tokenizer_hint(error)) from error
            raise
        latency = time.monotonic() - started
        self._transcript[:] = [*sent, output.message]
        if output.stop_reason == "model_length":
            # Inspect answers an overflowing conversation with an empty reply; the runner
            # ends such an episode as it does when litellm raises for it
            raise ContextOverflow(f"{self.model}: the conversation no longer fits the "
                                  "model's context window (Inspect's stop reason "
                                  "model_length)")
        usage = output.usage
        return LLMResponse(
            text=output.completion, model=output.model or self.model,
            input_tokens=usage.input_tokens if usage else 0,
            output_tokens=usage.output_tokens if usage else 0,
            cost_usd=0.0, latency_s=latency, retries=0,
            raw_finish_reason=_FINISH_REASONS.get(output.stop_reason, output.stop_reason),
            cost_known=False)
