"""Lost input: a server that counts far fewer prompt tokens than it was sent dropped some.

Two ways a local server loses part of a request and still answers (issue 35): a text-only
model served for the image protocol drops the images, and a chat template without a system
role drops the system prompt (48 tokens counted where about 1,900 were sent). The run then
looks like any other, but measures a model that never saw the task. The one sign is the
server's own count of prompt tokens, which every OpenAI-compatible server reports: this
module compares it with a floor estimate of what was sent, notes every turn that fell far
below it, and warns once per run (``LostInputWatch``); the runner records the count in the
manifest.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Sequence
from typing import Any

from llm_aai.llm.types import LLMResponse, Message

__all__ = ["LOST_INPUT_SHARE", "InputCheckedClient", "LostInputWatch", "expected_input_tokens",
           "image_token_floor", "lost_input_note"]

log = logging.getLogger(__name__)

LOST_INPUT_SHARE = 0.4
"""A count below this share of the estimate means input was lost. Tokenizers differ from one
another, and from 4 characters a token, by far less; a dropped system prompt or a history of
images is far more."""
CHARACTERS_PER_TOKEN = 4
"""English prose and scripts run about 4 characters a token; fewer tokens would be rare."""


def image_token_floor(resolution: int) -> int:
    """The fewest tokens a model counts for one square frame of ``resolution`` pixels.

    OpenAI counts at least 85 (low detail); Anthropic counts width x height / 750 and
    Qwen-VL about one token per 28 x 28 pixels, so a small frame may cost a few tokens only.
    The floor keeps a vision model that counts frames cheaply from looking as if it had
    lost them; the price is that a text-only server dropping small frames goes unnoticed.
    """
    return min(85, max(1, resolution * resolution // 784))


def expected_input_tokens(messages: Sequence[Message], image_tokens: int) -> int:
    """A floor estimate of a request's prompt tokens: its text, and each image at its fewest."""
    tokens = 0
    for message in messages:
        content = message.get("content")
        parts = [{"text": content}] if isinstance(content, str) else list(content or ())
        for part in parts:
            if part.get("type") in ("image_url", "image"):
                tokens += image_tokens
            else:
                tokens += len(str(part.get("text", ""))) // CHARACTERS_PER_TOKEN
    return tokens


def lost_input_note(messages: Sequence[Message], reported: int,
                    image_tokens: int) -> str | None:
    """The turn's note when the server counted far fewer prompt tokens than were sent.

    None when the count is plausible, or when there is none (0: a cached reply, or a server
    that reports no usage). ``image_tokens``: the floor of one image (``image_token_floor``).
    """
    expected = expected_input_tokens(messages, image_tokens)
    if reported <= 0 or reported >= LOST_INPUT_SHARE * expected:
        return None
    return (f"lost input: the server counted {reported:,} prompt tokens where about "
            f"{expected:,} were sent; it may drop the images (a text-only model) or the "
            f"system prompt (a chat template without a system role: try "
            f"--fold-system-prompt)")


def _warn(note: str) -> None:
    log.warning("%s. Said once per run: each such turn is noted in its log, and the manifest "
                "counts them (warnings.lost_input)", note)


class LostInputWatch:
    """Counts the turns of a run that lost input, and warns at the first (thread-safe).

    Args:
        image_tokens: the fewest tokens one of the run's frames may count
            (``image_token_floor`` of its resolution).

    """

    def __init__(self, image_tokens: int) -> None:
        self.image_tokens = image_tokens
        self.turns = 0
        self.first: str | None = None
        self._lock = threading.Lock()

    def check(self, messages: Sequence[Message], reported: int) -> str | None:
        """The note for this request, if it lost input; the run's first one is a warning."""
        note = lost_input_note(messages, reported, self.image_tokens)
        if note is None:
            return None
        with self._lock:
            self.turns += 1
            first = self.first is None
            if first:
                self.first = note
        if first:
            _warn(note)
        return note

    def add(self, record: dict[str, Any] | None) -> None:
        """Count another watch's turns (a worker's, on a cluster) into this run's record."""
        if not record:
            return
        with self._lock:
            self.turns += record["turns"]
            first = self.first is None
            if first:
                self.first = record["first"]
        if first:
            _warn(record["first"])

    def record(self) -> dict[str, Any] | None:
        """What the manifest keeps: the turns that lost input and the first note; None if none."""
        with self._lock:
            return {"turns": self.turns, "first": self.first} if self.turns else None


class InputCheckedClient:
    """A model client whose every reply is checked for lost input (noted on the reply).

    Args:
        inner: the client that makes the calls.
        watch: the run's count of turns that lost input.

    """

    def __init__(self, inner: Any, watch: LostInputWatch):
        self.inner = inner
        self.watch = watch

    @property
    def model(self) -> str:
        """The model the inner client calls."""
        return self.inner.model

    def __getattr__(self, name: str) -> Any:
        """The inner client's settings (the response cache keys requests by them)."""
        if name == "inner":  # not set yet (unpickling): no recursion through __getattr__
            raise AttributeError(name)
        return getattr(self.inner, name)

    def complete(self, messages: Sequence[Message]) -> LLMResponse:
        """The inner client's reply, with a note if the server lost part of the request."""
        response = self.inner.complete(messages)
        note = self.watch.check(messages, response.input_tokens)
        if note is None:
            return response
        return dataclasses.replace(response, notes=(*response.notes, note))
