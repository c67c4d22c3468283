"""The icl prompt's worked example in words under ``--observation text`` and ``both``.

The tutorial is replayed on the real simulator and each turn's view worded; the requests go
through the fake server as a model would receive them.
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from llm_aai.llm.fake_server import FakeChatServer
from llm_aai.perception.observer import ObservationMode
from llm_aai.prompts.examples import ExampleError, example_from_episode, load_example
from llm_aai.prompts.text_example import example_in_words
from llm_aai.runner import ModelOptions, RunConfig, RunError, start_run

TASK = "01-04-03"


@pytest.fixture(scope="module")
def tutorial():
    return load_example("tutorial-v1")


def _parts(message):
    content = message["content"]
    return content if isinstance(content, list) else [{"type": "text", "text": content}]


def _texts(message) -> str:
    return "\n".join(p["text"] for p in _parts(message) if p["type"] == "text")


def _images(message) -> int:
    return sum(p["type"] == "image_url" for p in _parts(message))


def _first_request(testbed_dir, tmp_path, **changes):
    with FakeChatServer(default='Think("on");Go(100);Go(100);') as server:
        config = RunConfig(model="openai/fake", tasks=TASK, arenas_dir=testbed_dir,
                           resolution=64, prompt="icl",
                           model_options=ModelOptions(api_base=server.url, max_tokens=256),
                           **changes)
        outcome = start_run(config, out=tmp_path, run_id="r", show_progress=False)
        request = server.requests[0]
    manifest = json.loads((outcome.run_dir / "manifest.json").read_text())
    return request.body["messages"], manifest


def test_in_text_mode_the_example_is_shown_in_words_without_pictures(testbed_dir, tmp_path,
                                                                      tutorial):
    messages, manifest = _first_request(testbed_dir, tmp_path, observation="text")
    assert sum(_images(m) for m in messages) == 0
    users = [m for m in messages if m["role"] == "user"]
    replies = [m["content"] for m in messages if m["role"] == "assistant"]
    assert replies == list(tutorial.scripts)  # the example's scripts, verbatim
    first = _texts(users[0]).splitlines()
    # the tutorial's opening view: "a yellow ball lies straight ahead and a grey wall stands
    # on my right", as its first script's thought says, now in words
    assert first[first.index("You see:") + 1] == \
        "- a yellow ball (1 m across), 6 m away, straight ahead"
    wall = next(line for line in first if "grey wall" in line)
    assert " right" in wall and " left" not in wall
    assert first[-1] == "Your remaining health is 99.9."
    # every shown turn of the example, and the episode's own first message, carry a view
    assert all("You see:" in _texts(m) for m in users)
    rendering = manifest["prompt"]["example"]["rendering"]
    assert rendering["observation"] == "text" and rendering["perspective"] == "egocentric"
    assert manifest["prompt"]["example"]["images"] == 0


def test_in_both_mode_the_example_keeps_its_pictures_and_gains_words(testbed_dir, tmp_path,
                                                                     tutorial):
    messages, _ = _first_request(testbed_dir, tmp_path, observation="both",
                                 perspective="allocentric")
    users = [m for m in messages if m["role"] == "user"]
    shown = sum(len(t.frames) for t in tutorial.turns[:-1])
    assert sum(_images(m) for m in users[:-1]) == shown  # the example's, then the episode's
    assert "\nYou are at x 5, z 3, facing 0° (arena coordinates" in _texts(users[0])
    assert "- a yellow ball (1 m across), centre at x 5, z 9" in _texts(users[0])


def test_a_replay_that_departs_from_the_record_is_refused_with_its_turn(tutorial):
    turns = list(tutorial.turns)
    turns[3] = dataclasses.replace(turns[3], health=50.0)
    tampered = dataclasses.replace(tutorial, turns=tuple(turns))
    with pytest.raises(ExampleError, match=r"turn 3 does not replay as recorded \(health"):
        example_in_words(tampered, ObservationMode("text"))
    assert example_in_words(tutorial, ObservationMode("image")) is tutorial


def test_an_example_without_its_arena_cannot_be_worded(testbed_dir, tmp_path, tutorial):
    folder = tmp_path / "no-arena"
    dataclasses.replace(tutorial, arena_yaml=None).save(folder)
    with pytest.raises(ExampleError, match="has no arena copy"):
        example_in_words(load_example(folder), ObservationMode("text"))
    with pytest.raises(RunError, match="has no arena copy"):
        start_run(RunConfig(model="heuristic", tasks=TASK, arenas_dir=testbed_dir,
                            prompt="icl", example=folder, observation="text"),
                  out=tmp_path, run_id="x", show_progress=False)
    assert not (tmp_path / "x").exists()  # refused before anything was written


def test_an_example_made_from_a_text_run_keeps_its_own_words(testbed_dir, tmp_path):
    outcome = start_run(RunConfig(model="heuristic", tasks=TASK, arenas_dir=testbed_dir,
                                  resolution=64, observation="text"),
                        out=tmp_path, run_id="t", show_progress=False)
    example = example_from_episode(outcome.run_dir / "episodes" / f"{TASK}_t1",
                                   arena_path=testbed_dir / f"{TASK}.yaml")
    worded = example_in_words(example, ObservationMode("text"))
    assert [t.text for t in worded.turns] == [t.text for t in example.turns]
    assert all(t.text.count("You see") <= 1 for t in worded.turns)
    assert worded.rendering["views"] == "as recorded"
