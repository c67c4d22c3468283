"""The response cache's key: what makes two requests the same one, and what never enters it."""

from __future__ import annotations

import base64

from llm_aai.llm.cache import request_key

PARAMS = {"temperature": 0.0, "max_tokens": 1024}


def _request(text: str = "Your remaining health is 99.8.", image: bytes = b"\xff\xd8frame"):
    url = "data:image/jpeg;base64," + base64.b64encode(image).decode()
    return [{"role": "system", "content": "You are an agent."},
            {"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}},
                                         {"type": "text", "text": text}]}]


def test_identical_requests_share_a_key():
    assert request_key("openai/m", _request(), PARAMS) == request_key("openai/m", _request(),
                                                                      dict(PARAMS))


def test_the_key_covers_the_model_every_message_each_image_and_every_parameter():
    key = request_key("openai/m", _request(), PARAMS)
    changed = [
        request_key("openai/other", _request(), PARAMS),
        request_key("openai/m", _request(text="Your remaining health is 99.7."), PARAMS),
        request_key("openai/m", _request(image=b"\xff\xd8frame!"), PARAMS),
        request_key("openai/m", _request()[1:], PARAMS),
        request_key("openai/m", _request(), {**PARAMS, "temperature": 0.5}),
        request_key("openai/m", _request(), {**PARAMS, "max_tokens": 64}),
        request_key("openai/m", _request(), {**PARAMS, "top_p": 0.9}),
    ]
    assert len({key, *changed}) == 1 + len(changed)


def test_a_lone_surrogate_in_a_message_still_makes_a_key():
    assert len(request_key("openai/m", _request(text="odd \ud800 reply"), PARAMS)) == 64
