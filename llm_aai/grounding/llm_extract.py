"""The optional LLM extractor (``--extractor MODEL``): a model splits each Think into claims.

Rules miss phrasings; a model reads them all, but may also invent. So the model only splits
the text: it returns the claims as JSON in the fields of ``Claim``, which are checked (kind,
type, side) and then judged by the same ``verify`` as the rules' claims. The reply is parsed as
JSON, never evaluated; a reply that is not the expected JSON is an error naming the Think.
"""

from __future__ import annotations

import json
from typing import Any

from llm_aai.grounding.claims import KINDS, SIDES, TYPES, Claim
from llm_aai.llm.client import LiteLLMClient
from llm_aai.llm.types import system_message, user_message

INSTRUCTIONS = f"""You split an agent's thought into the factual claims it makes about its
world, for checking. Answer with a JSON list only, one object per claim, with these fields:
"kind": one of {", ".join(KINDS)};
"span": the exact words of the thought that make the claim;
"type": for object and reward claims, one of {", ".join(TYPES)} (null: any ball);
"colour": the colour said (green, yellow, red, grey, transparent, ...), "food" for a green or
yellow ball, or null;
"sees": true if the object is said to be seen now, false if only believed to be somewhere;
for not_seen, true if said of the view ("I see no ball on my right"), false if said of where
the object is not ("the ball is not behind me");
"side": for bearing claims in words, one of {", ".join(SIDES)}, and for not_seen claims
limited to one side ("no green ball on my right"), else null;
"degrees": for bearing claims in degrees (positive right, negative left), else null;
"metres": for distance claims, else null;
"rising": for health claims true if health is said to go up, false if down; for reward
claims true if a ball is said to be collected, false if not;
"values": for health_comparison, the two health values [from, to] as written, else null.
Intentions and plans ("I will look for the green ball") are not claims. Answer [] if there
are none."""


class LlmExtractionError(ValueError):
    """The model's reply is not a list of valid claims; the message quotes the Think."""


class LlmExtractor:
    """Callable Think text -> claims, through one model (``llm_aai.llm.client``).

    Args:
        model: an alias or litellm model string.
        api_base: an OpenAI-compatible server's URL (a local model, the fake server).
    """

    def __init__(self, model: str, *, api_base: str | None = None) -> None:
        self.client = LiteLLMClient(model, api_base=api_base, max_tokens=2048)
        self._cache: dict[str, list[Claim]] = {}

    def __call__(self, think: str) -> list[Claim]:
        """The claims of ``think`` (each distinct text is asked once)."""
        if think not in self._cache:
            reply = self.client.complete([system_message(INSTRUCTIONS), user_message(think)])
            self._cache[think] = parse_claims(reply.text, think)
        return list(self._cache[think])


def parse_claims(text: str, think: str) -> list[Claim]:
    """The claims of a model's JSON reply (a ```json fence around it is allowed).

    Raises:
        LlmExtractionError: not JSON, not a list of objects, or a field out of range.
    """
    body = text.strip()
    if body.startswith("```"):
        body = body.strip("`").removeprefix("json").strip()
    try:
        items = json.loads(body)
    except json.JSONDecodeError as error:
        raise LlmExtractionError(f"the extractor's reply for Think {think!r} is not JSON "
                                 f"({error.msg} at character {error.pos})") from error
    if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
        raise LlmExtractionError(f"the extractor's reply for Think {think!r} is not a JSON "
                                 "list of objects")
    claims = []
    for number, item in enumerate(items):
        try:
            claims.append(_claim(item))
        except (TypeError, ValueError, KeyError) as error:
            raise LlmExtractionError(f"the extractor's claim {number} for Think {think!r}: "
                                     f"{error}") from error
    return claims


def _claim(item: dict[str, Any]) -> Claim:
    values = item.get("values")
    return Claim(
        kind=str(item["kind"]),
        span=str(item.get("span") or ""),
        type=item.get("type"),
        colour=_lower(item.get("colour")),
        sees=bool(item.get("sees", True)),
        side=item.get("side"),
        degrees=None if item.get("degrees") is None else float(item["degrees"]),
        metres=None if item.get("metres") is None else float(item["metres"]),
        rising=None if item.get("rising") is None else bool(item["rising"]),
        values=None if values is None else (float(values[0]), float(values[1])),
    )


def _lower(value: Any) -> str | None:
    return None if value is None else str(value).strip().lower()
