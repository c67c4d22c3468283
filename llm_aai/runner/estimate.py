"""What a run will ask of its model, worked out from the protocol before anything is called.

``--dry-run`` prints this: the requests (episodes x scripts, the script cap reached), the
input tokens of each request as the conversation grows (system prompt, worked example,
every earlier turn's text and images, within the image window) and the output tokens at an
assumed reply length. It is an upper estimate of requests (episodes that reach their goal
early stop early) and a typical one of tokens.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from llm_aai.llm.pricing import Prices
from llm_aai.prompts import Prompt
from llm_aai.protocol import PaperProtocol

__all__ = ["ASSUMED_REPLY_TOKENS", "RunEstimate", "estimate_episodes", "image_tokens_for"]

ASSUMED_REPLY_TOKENS = 60
"""A typical reply: one Think(...) sentence and a few commands."""
CHARS_PER_TOKEN = 4
"""English text in the providers' tokenizers, on average."""
UNCAPPED_SCRIPTS = 30
"""Scripts assumed per episode when the protocol sets no cap (the paper's cap)."""


@dataclass(frozen=True)
class RunEstimate:
    """Requests, tokens and dollars a run is expected to use.

    Attributes:
        episodes: tasks x trials.
        requests: model calls, every episode using every script.
        input_tokens: summed over the requests.
        output_tokens: at ``reply_tokens`` a reply.
        usd: the cost at the model's prices; None when it has no price.
        reply_tokens: the reply length assumed.

    """

    episodes: int
    requests: int
    input_tokens: int
    output_tokens: int
    usd: float | None
    reply_tokens: int

    def lines(self) -> list[str]:
        """The estimate as the dry run prints it."""
        usd = f"${self.usd:,.2f}" if self.usd is not None else "unknown (no price)"
        return [f"requests: {self.requests:,} (at most; an episode that ends early sends fewer)",
                f"input tokens: {self.input_tokens:,}",
                f"output tokens: {self.output_tokens:,} (at {self.reply_tokens} a reply)",
                f"cost: {usd}"]


def image_tokens_for(provider: str, resolution: int, *, own_server: bool = False) -> int:
    """Input tokens of one square frame, as each provider counts them.

    Anthropic: width x height / 750; Gemini: 258 for a small image; OpenAI: 85 for the base
    plus 170 per 512-pixel tile at high detail. A server of one's own (``--api-base``: vLLM,
    Ollama, a proxy, the fake server) is counted at OpenAI's base charge of 85, as OpenAI's
    low-detail images are; its vision model may count otherwise, so the plan prints it.
    """
    if own_server:
        return 85
    if provider == "anthropic":
        return math.ceil(resolution * resolution / 750)
    if provider in ("gemini", "vertex_ai"):
        return 258
    tiles = math.ceil(resolution / 512) ** 2
    return 85 + 170 * tiles


def _text_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def estimate_episodes(episodes: int, prompt: Prompt, protocol: PaperProtocol, *,
                      image_tokens: int, keep_last_images: int | None = None,
                      prices: Prices | None = None,
                      reply_tokens: int = ASSUMED_REPLY_TOKENS) -> RunEstimate:
    """Estimate ``episodes`` episodes of the protocol with this prompt."""
    scripts = protocol.max_scripts or UNCAPPED_SCRIPTS
    messages = prompt.messages
    text = _text_tokens(prompt.system_text)
    images = 0
    for prior in prompt.prelude:  # the worked example, sent before every episode
        shown = prior.turn
        text += _text_tokens(shown.preamble + shown.text) + _text_tokens(prior.reply)
        images += len(shown.images)
    episode_input = 0
    for number in range(1, scripts + 1):
        if number == 1:
            text += _text_tokens(messages.preamble + messages.initial(100.0))
            images += protocol.initial_observations
        else:
            text += reply_tokens + _text_tokens(messages.preamble + messages.observation(100.0))
            images += 1
        sent_images = images if keep_last_images is None else min(images, keep_last_images)
        episode_input += text + sent_images * image_tokens
    requests = episodes * scripts
    input_tokens = episodes * episode_input
    output_tokens = requests * reply_tokens
    usd = prices.cost(input_tokens, output_tokens) if prices is not None else None
    return RunEstimate(episodes, requests, input_tokens, output_tokens, usd, reply_tokens)
