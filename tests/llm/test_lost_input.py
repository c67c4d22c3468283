"""Lost input: a server counting far fewer prompt tokens than were sent (#35 item 3)."""

from __future__ import annotations

import logging

import pytest

from llm_aai.llm.lost_input import (
    InputCheckedClient,
    LostInputWatch,
    expected_input_tokens,
    image_token_floor,
    lost_input_note,
)
from llm_aai.llm.types import LLMResponse, system_message, text_part, user_message

SYSTEM = "x" * 8000  # about 2,000 tokens, as the react prompt
IMAGE = "data:image/png;base64,AAAA"


def conversation(images: int = 0):
    return [system_message(SYSTEM), user_message("health 99", [IMAGE] * images)]


def test_the_estimate_counts_text_and_images_at_their_floor():
    messages = [system_message("a" * 400), {"role": "user",
                                            "content": [text_part("b" * 40), *[
                                                {"type": "image_url",
                                                 "image_url": {"url": IMAGE}}] * 3]}]
    assert expected_input_tokens(messages, image_tokens=85) == 100 + 10 + 3 * 85


@pytest.mark.parametrize("resolution, floor", [(512, 85), (256, 83), (64, 5), (16, 1)])
def test_a_small_frame_counts_few_tokens(resolution, floor):
    assert image_token_floor(resolution) == floor


def test_a_dropped_system_prompt_is_noted_and_a_plausible_count_is_not():
    messages = conversation()
    assert lost_input_note(messages, 1_700, 85) is None  # another tokenizer's count
    assert lost_input_note(messages, 0, 85) is None  # no count (a cached reply)
    note = lost_input_note(messages, 48, 85)
    assert note.startswith("lost input: the server counted 48 prompt tokens where about 2,0")
    assert "--fold-system-prompt" in note


def test_dropped_images_are_noted_when_they_weigh():
    messages = [system_message("short"), user_message("h", [IMAGE] * 40)]  # 40 x 85 tokens
    assert lost_input_note(messages, 20, 85) is not None  # a text-only server
    assert lost_input_note(messages, 40 * 64, 85) is None  # a vision model's own count


class _Fixed:
    model = "openai/local"
    api_base = "http://127.0.0.1:9/v1"

    def __init__(self, input_tokens: int):
        self.input_tokens = input_tokens

    def complete(self, messages):
        return LLMResponse(text="Go(1);", model=self.model, input_tokens=self.input_tokens,
                           output_tokens=2, cost_usd=0.0, latency_s=0.0, retries=0,
                           raw_finish_reason="stop", notes=("kept",))


def test_the_watch_warns_once_and_counts_every_turn(caplog):
    watch = LostInputWatch(image_tokens=85)
    clients = [InputCheckedClient(_Fixed(48), watch) for _ in range(2)]  # two episodes
    with caplog.at_level(logging.WARNING, logger="llm_aai.llm.lost_input"):
        replies = [client.complete(conversation()) for client in clients for _ in range(3)]
    assert len([r for r in caplog.records if "lost input" in r.getMessage()]) == 1
    assert all(reply.notes[0] == "kept" and reply.notes[1].startswith("lost input")
               for reply in replies)
    assert watch.record() == {"turns": 6, "first": replies[0].notes[1]}
    assert clients[0].api_base == "http://127.0.0.1:9/v1"  # the cache keys by it
    fine = InputCheckedClient(_Fixed(2_000), LostInputWatch(image_tokens=85))
    assert fine.complete(conversation()).notes == ("kept",)
    assert fine.watch.record() is None
