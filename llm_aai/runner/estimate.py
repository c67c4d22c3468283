"""What a run will ask of its model, worked out from the protocol before anything is called.

``--dry-run`` prints this: the requests and, for each, the input tokens as the conversation
grows (system prompt, worked example, every earlier turn's text and images, within the image
window) and the output tokens at an assumed reply length. Each mode shapes its requests its
own way (``EpisodeShape``): how many replies an episode takes at most, how many images go
with the first message and with each later one, and what text goes with them besides the
turn message (the arena's map, the words of a text observation, the line naming the steps
of ``--observe-every``'s frames). Requests are an upper estimate (episodes that reach their
goal early stop early); tokens are a typical estimate.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from llm_aai.llm.pricing import Prices
from llm_aai.perception.observer import ObservationMode
from llm_aai.prompts import Prompt, TurnMessages
from llm_aai.prompts.modes import frames_line, next_level_line
from llm_aai.protocol import Episode, EpisodeProtocol
from llm_aai.protocol.modes import ModeSettings
from llm_aai.protocol.observe_every import EveryNSteps, frame_steps
from llm_aai.sim.builds import time_limit_steps
from llm_aai.sim.rules import PHYSICS_STEPS_PER_UNIT

__all__ = ["ASSUMED_REPLY_TOKENS", "ASSUMED_SCRIPT_STEPS", "EpisodeShape", "ObservationTexts",
           "RunEstimate", "episode_shape", "estimate_episodes", "image_tokens_for",
           "measure_observation_texts"]

ASSUMED_REPLY_TOKENS = 60
"""A typical reply: one Think(...) sentence and a few commands (or one frame action)."""
ASSUMED_SCRIPT_STEPS = 20
"""Steps a typical script takes (a turn and a short walk, ``Turn(60);Go(10);``): with
``--observe-every N`` it sets how many frames each message carries."""
FRAME_ACTION_STEPS = 1
"""Steps a frame-control reply takes at the least (one action, no repeat): replies cannot
outnumber the steps left before the arena's time limit."""
CHARS_PER_TOKEN = 4
"""English text in the providers' tokenizers, on average."""


@dataclass(frozen=True)
class RunEstimate:
    """Requests, tokens and dollars a run is expected to use.

    Attributes:
        episodes: tasks x trials.
        requests: model calls, every episode using every reply it may.
        input_tokens: summed over the requests.
        output_tokens: at ``reply_tokens`` a reply.
        usd: the cost at the model's prices; None when it has no price.
        reply_tokens: the reply length assumed.
        longest_input_tokens: the input tokens of the longest request: what the model's
            context window must hold, besides the reply (``--max-tokens``).
        calls_model: False for a built-in agent (heuristic, random, oracle...): it makes no
            model calls, so it costs $0 whatever the price list says.

    """

    episodes: int
    requests: int
    input_tokens: int
    output_tokens: int
    usd: float | None
    reply_tokens: int
    longest_input_tokens: int = 0
    calls_model: bool = True

    def lines(self) -> list[str]:
        """The estimate as the dry run prints it."""
        if not self.calls_model:
            return ["requests: 0 (a built-in agent makes no model calls)",
                    "cost: $0 (no model calls)"]
        usd = ("unknown (no price)" if self.usd is None
               else f"${self.usd:,.2f}" if self.usd >= 10 else f"${self.usd:.4f}")
        return [f"requests: {self.requests:,} (at most; an episode that ends early sends fewer)",
                f"input tokens: {self.input_tokens:,}",
                f"output tokens: {self.output_tokens:,} (at {self.reply_tokens} a reply)",
                f"longest request: {self.longest_input_tokens:,} input tokens; a server's "
                f"context must hold that plus --max-tokens (--keep-last-turns N shortens it)",
                f"cost: {usd}"]


@dataclass(frozen=True)
class ObservationTexts:
    """The text a task's messages carry besides the turn message (empty for images only).

    Attributes:
        first: with the first message: the arena's map (plan-then-act) or a description.
        later: with each later message: a description of the view (the start's, as a
            typical one).

    """

    first: str = ""
    later: str = ""


@dataclass(frozen=True)
class EpisodeShape:
    """What the requests of one episode carry, by mode.

    Attributes:
        replies: requests in the episode, at most.
        first_images: images with the first message.
        later_images: images with each later message.
        first_text: text with the first message besides the turn message.
        later_text: text with each later message besides the turn message.

    """

    replies: int
    first_images: int
    later_images: int
    first_text: str = ""
    later_text: str = ""


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


def start_steps(protocol: EpisodeProtocol) -> int:
    """Steps the protocol takes before the first reply (the no-ops around the observations)."""
    return (protocol.steps_after_reset
            + protocol.initial_observations * protocol.noops_after_initial_observation)


def episode_shape(protocol: EpisodeProtocol, modes: ModeSettings, observation: ObservationMode,
                  messages: TurnMessages, *, time_limit: float = 0.0,
                  steps_per_unit: int = PHYSICS_STEPS_PER_UNIT,
                  texts: ObservationTexts = ObservationTexts(),
                  script_steps: int = ASSUMED_SCRIPT_STEPS) -> EpisodeShape:
    """The request shape of one episode of a task whose arena has time limit ``time_limit``.

    Args:
        protocol: the run's protocol (its script cap, or reply guard without one).
        modes: frame or script control, frames during a reply, the filmstrip.
        observation: images, text or both; the arena's map for plan-then-act.
        messages: the prompt's turn messages (for the line naming the frames' steps).
        time_limit: the arena's ``t``; bounds the replies of action control, each of which
            takes a step at least (a script may take none, so it bounds nothing there).
        steps_per_unit: physics steps in one unit of ``t`` in the run's build.
        texts: the task's map and description (``measure_observation_texts``).
        script_steps: steps a reply is assumed to take, which sets the frames a message
            carries with ``--observe-every``.

    """
    frame = modes.control == "action"
    steps = FRAME_ACTION_STEPS if frame else script_steps
    replies = protocol.max_scripts if protocol.max_scripts is not None else protocol.max_replies
    if replies is None:
        raise ValueError("a protocol without the script cap needs a reply guard (max_replies)")
    limit = time_limit_steps(time_limit, steps_per_unit)
    if frame and limit is not None:
        replies = max(1, min(replies, math.ceil((limit - start_steps(protocol)) / steps)))
    later_images, line = 1, ""
    if modes.observe_every is not None:
        runs = EveryNSteps(modes.observe_every).runs([(0, 0)] * steps)
        taken = frame_steps([len(run) for run in runs])
        if len(taken) >= 2:  # one frame only: the paper's message, without a line
            later_images = 2 if modes.filmstrip else len(taken)
            shown = taken[:-1] if modes.filmstrip else taken
            line = frames_line(messages, tuple(shown), filmstrip=modes.filmstrip) + "\n"
    if observation.images:
        first_images = 1 if observation.arena_map else protocol.initial_observations
    else:
        first_images = later_images = 0
    return EpisodeShape(replies, first_images, later_images, texts.first,
                        line + texts.later)


def measure_observation_texts(make_env: Callable[[], object], protocol: EpisodeProtocol,
                              observation: ObservationMode,
                              episodes: Mapping[str, tuple[str, int]]
                              ) -> dict[str, ObservationTexts]:
    """The map and description each task's messages carry, read in the simulator.

    Each task is started once (with the seed of its first episode, so random placements are
    the run's) and described as the run would describe it after the initial observations;
    images only, nothing is built and every task's texts are empty.

    Args:
        make_env: builds the run's env (closed here).
        protocol: the run's protocol (its start).
        observation: what the messages carry.
        episodes: for each task id, the arena file and the seed to start it with.

    """
    if not (observation.text or observation.arena_map):
        return {task_id: ObservationTexts() for task_id in episodes}
    env = make_env()
    texts = {}
    try:
        for task_id, (arena, seed) in episodes.items():
            Episode(env, protocol).start(seed=seed, arena=arena, observe_last=False)
            texts[task_id] = ObservationTexts(observation.first_message(env, ""),
                                              observation.message(env, ""))
    finally:
        env.close()
    return texts


def _text_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def _conversation_input_tokens(shapes: Sequence[EpisodeShape], prompt: Prompt, *,
                               image_tokens: int, keep_last_images: int | None,
                               reply_tokens: int,
                               keep_last_turns: int | None = None) -> tuple[int, int]:
    """Input tokens of every request of one conversation, and those of its longest request.

    The requests grow turn by turn; the longest is what the model's context must hold,
    besides the reply.

    A conversation is one episode (the paper's), or a trial's tasks played in one with
    ``--context across-tasks``: each task after the first then carries every earlier task
    and opens with the last one's outcome line. ``keep_last_turns`` sends only the last
    turns after the prompt (each turn its message, its images and, but for the last, its
    reply).
    """
    messages = prompt.messages
    text = _text_tokens(prompt.system_text)
    images = 0
    for prior in prompt.prelude:  # the worked example, sent before every episode
        shown = prior.turn
        text += _text_tokens(shown.preamble + shown.text) + _text_tokens(prior.reply)
        images += len(shown.images)
    head_text, head_images = text, images
    turns: list[tuple[int, int]] = []  # each turn's text tokens (with its reply) and images
    opening = 0
    if "next_level" in messages.templates:  # the line opening each task after the first
        opening = _text_tokens(next_level_line(messages, reward=0.0, health=0.0, passed=False,
                                               position=2, count=len(shapes)))
    total = longest = 0
    for position, shape in enumerate(shapes):
        for number in range(1, shape.replies + 1):
            if turns:  # the reply to the last message is in the history now
                turns[-1] = (turns[-1][0] + reply_tokens, turns[-1][1])
            if number == 1:
                turn_text = _text_tokens(messages.preamble + shape.first_text
                                         + messages.initial(100.0))
                if position:  # the last task's outcome opens the message
                    turn_text += opening
                turns.append((turn_text, shape.first_images))
            else:
                turns.append((_text_tokens(messages.preamble + shape.later_text
                                           + messages.observation(100.0)), shape.later_images))
            sent = turns if keep_last_turns is None else turns[-keep_last_turns:]
            text = head_text + sum(t for t, _ in sent)
            images = head_images + sum(i for _, i in sent)
            sent_images = images if keep_last_images is None else min(images, keep_last_images)
            request = text + sent_images * image_tokens
            total += request
            longest = max(longest, request)
    return total, longest


def estimate_episodes(shapes: Iterable[EpisodeShape], prompt: Prompt, *, image_tokens: int,
                      keep_last_images: int | None = None, keep_last_turns: int | None = None,
                      prices: Prices | None = None,
                      reply_tokens: int = ASSUMED_REPLY_TOKENS,
                      tasks_per_conversation: int = 1) -> RunEstimate:
    """Estimate episodes of the given shapes (one shape an episode) with this prompt.

    With ``--context across-tasks`` (``tasks_per_conversation`` > 1) the shapes come in
    conversation order, each run of ``tasks_per_conversation`` shapes one conversation.
    """
    shapes = list(shapes)
    size = max(1, tasks_per_conversation)
    counts = Counter(tuple(shapes[i:i + size]) for i in range(0, len(shapes), size))
    episodes = len(shapes)
    requests = sum(shape.replies for shape in shapes)
    sizes = {conversation: _conversation_input_tokens(conversation, prompt,
                                                      image_tokens=image_tokens,
                                                      keep_last_images=keep_last_images,
                                                      reply_tokens=reply_tokens,
                                                      keep_last_turns=keep_last_turns)
             for conversation in counts}
    input_tokens = sum(n * sizes[conversation][0] for conversation, n in counts.items())
    longest = max((size[1] for size in sizes.values()), default=0)
    output_tokens = requests * reply_tokens
    usd = prices.cost(input_tokens, output_tokens) if prices is not None else None
    return RunEstimate(episodes, requests, input_tokens, output_tokens, usd, reply_tokens,
                       longest)
