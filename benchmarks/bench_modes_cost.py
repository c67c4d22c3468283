"""What each control and sensing mode costs per episode, against the paper's mode.

Run from the repository root::

    python -m benchmarks.bench_modes_cost [--task 01-04-03] [--resolution 512] [--out FILE.md]

Each mode plays one episode of a testbed task on the embedded simulator with the real run
library and request building (``LLMAgent``, litellm over HTTP) against the local fake model,
which answers every request with a reply of fixed length (a 200-character thought and a
script, or a thought and one frame action). The requests the server received are then priced
as Claude Sonnet 4.6 would bill them (``claude`` in ``llm_aai.llm.aliases``; prices from
litellm's table): text at about 4 characters a token, each image at width x height / 750
tokens (Anthropic's documented estimate). Prompt caching is priced from the requests
themselves: the part of a request equal to the previous one's is a cache read (0.1x), the
rest a cache write (1.25x), as Anthropic bills a prefix cached at the last user message.

One context across tasks is priced on a conversation of level 1's four tasks, per episode
(the conversation's total over its four tasks), beside the paper's mode on the same four tasks
played one conversation each: its cost grows with the conversation's length, as every request
carries the tasks before it.
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from PIL import Image

from llm_aai.llm.fake_server import FakeChatServer
from llm_aai.llm.quiet_import import import_litellm
from llm_aai.protocol import EpisodeProtocol
from llm_aai.protocol.modes import ModeSettings
from llm_aai.runner import ModelOptions, RunConfig, start_run

PRICE_MODEL = "claude-sonnet-4-6"
THOUGHT = "x" * 200
SCRIPT_REPLY = f'Think("{THOUGHT}");Turn(30);Go(5);'
FRAME_REPLY = f'Think("{THOUGHT}");forward x4'
GUARD = 500
WINDOW = 8
CONVERSATION = "01-04-03,01-06-02,01-21-01,01-23-01"
"""Level 1's four tasks of the children subset: the across-tasks rows' conversation."""

MODES = {
    "paper (30 scripts)": ({}, SCRIPT_REPLY),
    "action control": ({"modes": ModeSettings(control="action"),
                       "protocol": EpisodeProtocol(max_scripts=None, max_replies=GUARD)},
                      FRAME_REPLY),
    "observe every 6": ({"modes": ModeSettings(observe_every=6)}, SCRIPT_REPLY),
    "observe every 6, filmstrip": ({"modes": ModeSettings(observe_every=6, filmstrip=True)},
                                   SCRIPT_REPLY),
    "no script cap": ({"protocol": EpisodeProtocol(max_scripts=None, max_replies=GUARD)},
                      SCRIPT_REPLY),
}
CONVERSATION_MODES = {
    "paper, level 1's 4 tasks": ({}, SCRIPT_REPLY),
    "across tasks, level 1's 4 tasks": ({"modes": ModeSettings(context="across-tasks")},
                                        SCRIPT_REPLY),
}
"""Modes priced per episode over ``CONVERSATION``; the first is their ``x paper`` reference."""


@dataclass(frozen=True)
class Cost:
    """One episode's requests, tokens and dollars."""

    requests: int
    images: int
    input_tokens: int
    output_tokens: int
    dollars: float
    dollars_cached: float


def _message_tokens(message: dict) -> list[int]:
    """Tokens of each part of a message, in order (text by length, images by size)."""
    content = message["content"]
    if isinstance(content, str):
        return [max(1, len(content) // 4)]
    tokens = []
    for part in content:
        if part.get("type") == "image_url":
            data = base64.b64decode(part["image_url"]["url"].split(",", 1)[1])
            width, height = Image.open(io.BytesIO(data)).size
            tokens.append(round(width * height / 750))
        else:
            tokens.append(max(1, len(part.get("text", "")) // 4))
    return tokens


def price(bodies: list[dict], reply: str, episodes: int = 1) -> Cost:
    """Bill the requests as the module docstring says, per episode of ``episodes``."""
    prices = import_litellm().model_cost[PRICE_MODEL]
    unit_in, unit_out = prices["input_cost_per_token"], prices["output_cost_per_token"]
    unit_read = prices["cache_read_input_token_cost"]
    unit_write = prices["cache_creation_input_token_cost"]
    output = max(1, len(reply) // 4)
    total_in = 0
    dollars = cached = 0.0
    previous: list[tuple[str, int]] = []
    for body in bodies:
        parts = []  # (identity of the part, its tokens), in order
        for message in body["messages"]:
            content = message["content"]
            keys = ([content] if isinstance(content, str)
                    else [json.dumps(part, sort_keys=True) for part in content])
            parts.extend((f"{message['role']}:{key}", tokens)
                         for key, tokens in zip(keys, _message_tokens(message), strict=True))
        tokens = sum(t for _, t in parts)
        shared = 0
        for (key, t), (old, _) in zip(parts, previous, strict=False):
            if key != old:
                break
            shared += t
        total_in += tokens
        dollars += tokens * unit_in + output * unit_out
        cached += shared * unit_read + (tokens - shared) * unit_write + output * unit_out
        previous = parts
    images = sum(1 for body in bodies for message in body["messages"]
                 if isinstance(message["content"], list)
                 for part in message["content"] if part.get("type") == "image_url")
    return Cost(round(len(bodies) / episodes), round(images / episodes),
                round(total_in / episodes), round(output * len(bodies) / episodes),
                dollars / episodes, cached / episodes)


def play(mode: dict, reply: str, task: str, resolution: int, arenas: Path | None,
         window: int | None) -> Cost:
    """Every task of ``task`` (ids joined by commas) in ``mode``, the fake model answering
    ``reply``; the cost per episode."""
    with FakeChatServer(default=reply) as server, tempfile.TemporaryDirectory() as out:
        config = replace(RunConfig(model="openai/fake", tasks=task, resolution=resolution,
                                   arenas_dir=arenas,
                                   model_options=ModelOptions(api_base=server.url,
                                                              keep_last_images=window)),
                         **mode)
        start_run(config, out=out, run_id="cost", show_progress=False)
        return price([request.body for request in server.requests], reply,
                     episodes=len(task.split(",")))


def table(task: str, resolution: int, arenas: Path | None, names: list[str] | None = None) -> str:
    """The Markdown table of every mode (or of ``names``), with and without the image window."""
    lines = ["# What each mode costs per episode",
             "",
             "Made by `python -m benchmarks.bench_modes_cost` (method in its docstring). Task "
             f"{task}, {resolution} px JPEG frames, priced as {PRICE_MODEL}; one episode per "
             "row. Replies have a fixed length: a 200-character thought and `Turn(30);Go(5);` "
             "(10 steps) or `forward x4` (4 steps). The image window is `--keep-last-images "
             f"{WINDOW}`; caching prices each request's prefix shared with the previous request "
             "as a cache read. `x paper` compares the uncached dollars with the paper's mode. "
             f"The last rows play level 1's four tasks ({CONVERSATION}) and give the cost "
             "per episode: one conversation across them against one conversation each.",
             "",
             "| mode | image window | requests | images in all requests | input tokens "
             "| $ / episode | $ with caching | x paper |",
             "|---|---|---|---|---|---|---|---|"]
    for modes, tasks in ((MODES, task), (CONVERSATION_MODES, CONVERSATION)):
        paper = None
        for name, (mode, reply) in modes.items():
            for window in (None, WINDOW):
                if names and name not in names and paper is not None:
                    continue
                cost = play(mode, reply, tasks, resolution, arenas, window)
                if paper is None:
                    paper = cost.dollars
                if names and name not in names:
                    continue
                shown = "all" if window is None else f"last {window}"
                lines.append(f"| {name} | {shown} | {cost.requests} | {cost.images:,} | "
                             f"{cost.input_tokens:,} | {cost.dollars:.2f} | "
                             f"{cost.dollars_cached:.2f} | {cost.dollars / paper:.1f} |")
                print(lines[-1], flush=True)
    return "\n".join(lines) + "\n"


def main() -> None:
    """Print the table (and write it with ``--out``)."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_modes_cost")
    parser.add_argument("--task", default="01-04-03")
    parser.add_argument("--resolution", type=int, default=512)
    parser.add_argument("--arenas-dir", type=Path)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--mode", action="append", dest="modes", metavar="NAME",
                        help="price only this row's mode (repeatable; default: all)")
    args = parser.parse_args()
    text = table(args.task, args.resolution, args.arenas_dir, args.modes)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
