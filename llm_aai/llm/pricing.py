"""What model calls cost: litellm's price list, or prices the user gives, and request estimates.

A model litellm has no price for (a local vLLM or Ollama model, a model newer than the
installed litellm) has an *unknown* cost, never a zero one: a budget cannot be kept with it
unless the user names the prices (``--price-per-mtok INPUT,OUTPUT``).
"""

from __future__ import annotations

import functools
import importlib.util
import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llm_aai.llm.quiet_import import import_litellm
from llm_aai.llm.types import Message

__all__ = ["Prices", "estimate_input_tokens", "image_token_estimate", "litellm_prices"]

CHARS_PER_TOKEN_FLOOR = 3
"""Text is counted as one token per 3 characters: English averages about 4 in the providers'
tokenizers, so the estimate errs high, as a budget's must."""


@dataclass(frozen=True)
class Prices:
    """Dollars per million input and output tokens."""

    input_per_mtok: float
    output_per_mtok: float

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        """The dollars a call with these token counts costs."""
        return (input_tokens * self.input_per_mtok + output_tokens * self.output_per_mtok) / 1e6


def litellm_prices(model: str) -> Prices | None:
    """Litellm's prices for a litellm model string, or None when it has none.

    The entry is looked up in the price list litellm ships first (``bundled_entry``), which
    answers ``openai/gpt-4o`` without importing litellm (seconds, most of a dry run's time);
    a model it does not hold plainly (an alias litellm resolves, a deployment-specific name)
    is asked of ``litellm.get_model_info``, as before.
    """
    info = bundled_entry(model)
    if info is None:
        litellm = import_litellm()
        try:
            info = litellm.get_model_info(model)
        except Exception:  # noqa: BLE001 - litellm raises several kinds for an unmapped model
            return None
    per_input, per_output = info.get("input_cost_per_token"), info.get("output_cost_per_token")
    if per_input is None or per_output is None:
        return None
    return Prices(per_input * 1e6, per_output * 1e6)


def bundled_entry(model: str) -> dict[str, Any] | None:
    """The entry of ``provider/name`` in litellm's shipped price list, if it holds it plainly.

    The list keys most models by their bare name (``gpt-4o``) with the provider in the entry,
    and some by ``provider/name``; an entry counts only when its provider is the model's
    prefix, as litellm's own lookup requires, and it holds both token prices. ``llm_aai`` sets
    ``LITELLM_LOCAL_MODEL_COST_MAP``, so this list is the one litellm prices calls from;
    without it litellm would fetch a newer one, and litellm is asked instead.
    """
    prefix, slash, name = model.partition("/")
    if not slash or os.environ.get("LITELLM_LOCAL_MODEL_COST_MAP", "").lower() != "true":
        return None
    prices = _bundled_prices()
    for key in (model, name):
        entry = prices.get(key)
        if (isinstance(entry, dict) and entry.get("litellm_provider") == prefix
                and {"input_cost_per_token", "output_cost_per_token"} <= entry.keys()):
            return entry  # one without both prices litellm fills in (with 0): its to answer
    return None


@functools.cache
def _bundled_prices() -> dict[str, Any]:
    """The price list litellm ships (``model_prices_and_context_window_backup.json``).

    Found without importing litellm.
    """
    spec = importlib.util.find_spec("litellm")
    if spec is None or spec.origin is None:
        return {}
    path = Path(spec.origin).parent / "model_prices_and_context_window_backup.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # a litellm that moved it: its own lookup answers
        return {}


def image_token_estimate(resolution: int) -> int:
    """An upper estimate of what one square frame costs in input tokens.

    The larger of OpenAI's high-detail charge for one 512-pixel tile (255) and Anthropic's
    width x height / 750; Gemini charges 258 for an image this small.
    """
    return max(258, math.ceil(resolution * resolution / 750))


def estimate_input_tokens(messages: Sequence[Message], image_tokens: int) -> int:
    """An upper estimate of a request's input tokens, from its text and its images."""
    characters, images = 0, 0
    for message in messages:
        characters += 8  # the role and the message's framing
        content = message.get("content")
        if isinstance(content, str):
            characters += len(content)
            continue
        for part in content or ():
            if part.get("type") in ("image_url", "image"):
                images += 1
            else:
                characters += len(str(part.get("text", "")))
    return math.ceil(characters / CHARS_PER_TOKEN_FLOOR) + images * image_tokens
