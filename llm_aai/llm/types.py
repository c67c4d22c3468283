"""Chat messages in OpenAI format and the one response type every client returns.

litellm translates OpenAI-format messages (including ``image_url`` content parts with
base64 data URLs) for every provider, so the agents build only this one format.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from llm_aai.frames import FrameFormat, data_url

__all__ = [
    "LLMResponse",
    "Message",
    "assistant_message",
    "encode_png_data_url",
    "image_part",
    "system_message",
    "text_part",
    "user_message",
]

Message = dict[str, Any]


def text_part(text: str) -> dict[str, Any]:
    """Build a text content part."""
    return {"type": "text", "text": text}


def encode_png_data_url(image: np.ndarray) -> str:
    """Encode an RGB (H, W, 3) uint8 array (or float in [0, 1]) as a PNG data URL.

    PNG is lossless, so the model sees exactly the pixels the simulator rendered.
    """
    array = np.asarray(image)
    if array.ndim != 3 or array.shape[2] not in (3, 4):
        raise ValueError(f"expected an (H, W, 3) image array, got shape {array.shape}")
    if array.dtype != np.uint8:
        if np.issubdtype(array.dtype, np.floating) and array.size and array.max() <= 1.0:
            array = np.rint(array * 255.0)
        array = np.clip(array, 0, 255).astype(np.uint8)
    return data_url(FrameFormat("png").encode(array[:, :, :3]))


def image_part(image: np.ndarray | str) -> dict[str, Any]:
    """Build an image content part from an array or an already encoded data URL."""
    url = image if isinstance(image, str) else encode_png_data_url(image)
    return {"type": "image_url", "image_url": {"url": url}}


def system_message(text: str) -> Message:
    """Build the background prompt that opens every conversation."""
    return {"role": "system", "content": text}


def user_message(text: str = "", images: Sequence[np.ndarray | str] = (),
                 preamble: str = "") -> Message:
    """Build a user turn: optional ``preamble`` text, then the images, then ``text``.

    Plain text stays a string (cheapest for every provider); any image makes the
    content a list of parts in reading order.
    """
    if not images:
        joined = "\n".join(t for t in (preamble, text) if t)
        return {"role": "user", "content": joined}
    parts: list[dict[str, Any]] = []
    if preamble:
        parts.append(text_part(preamble))
    parts.extend(image_part(image) for image in images)
    if text:
        parts.append(text_part(text))
    return {"role": "user", "content": parts}


def assistant_message(text: str) -> Message:
    """Build a model reply, kept in the history sent on later turns."""
    return {"role": "assistant", "content": text}


@dataclass(frozen=True)
class LLMResponse:
    """What one completed model call produced, with its accounting.

    Attributes:
        text: the reply text (empty string if the model returned no content).
        model: the model id the provider reports (or the requested one).
        input_tokens: prompt tokens billed.
        output_tokens: completion tokens billed.
        cost_usd: litellm's cost estimate; 0.0 when unknown (see ``cost_known``).
        latency_s: wall time of the successful attempt, waits excluded.
        retries: failed attempts before the successful one.
        raw_finish_reason: the provider's finish reason ("stop", "length", ...).
        cost_known: False when litellm has no price for the model.
        notes: what was changed in the reply before it was kept (a lone surrogate replaced,
            see ``llm_aai.llm.sanitize``); logged with the turn.
        unanswered: tries before this reply that were sent and got no usable reply (timed
            out, or no choice in it): a provider may bill them, though no usage says what.
        unanswered_cost_usd: what a budget charged for those tries (``llm_aai.runner.budget``),
            and for this reply when its usage is unknown: an estimate, not a cost a provider
            reported, so apart from ``cost_usd``.
        usage_known: False when the reply's usage was impossible (negative, not a number,
            huge, missing: ``llm_aai.llm.usage``): its tokens and ``cost_usd`` are then 0 and
            ``cost_known`` False; a budget charges it its reservation instead.

    """

    text: str
    model: str
    input_tokens: int
    output_tokens: int
    cost_usd: float
    latency_s: float
    retries: int
    raw_finish_reason: str | None
    cost_known: bool = True
    notes: tuple[str, ...] = ()
    unanswered: int = 0
    unanswered_cost_usd: float = 0.0
    usage_known: bool = True
