"""Worked examples: the recorded tutorial, its replay, tampering, and examples from run logs."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from llm_aai.env import AnimalAIEnv
from llm_aai.frames import FrameFormat
from llm_aai.logs import EpisodeResult, RunStore, TurnRecord
from llm_aai.playback import play_scripts
from llm_aai.prompts import load_prompt, load_turn_messages
from llm_aai.prompts.examples import (
    EXAMPLES_DIR,
    ExampleError,
    example_from_episode,
    load_example,
    main,
)
from llm_aai.script import parse_script

TUTORIAL = EXAMPLES_DIR / "tutorial-v1"


@pytest.fixture(scope="module")
def tutorial():
    return load_example("tutorial-v1")


def test_tutorial_example_is_complete_and_small(tutorial):
    assert tutorial.sha256 == hashlib.sha256((TUTORIAL / "example.json").read_bytes()).hexdigest()
    assert [t.turn for t in tutorial.turns] == list(range(len(tutorial.turns)))
    assert len(tutorial.turns[0].frames) == 3
    assert all(len(t.frames) == 1 for t in tutorial.turns[1:])
    assert all(f.shape == (256, 256, 3) for t in tutorial.turns for f in t.frames)
    for script in tutorial.scripts:
        assert parse_script(script, mode="strict").thoughts  # every script explains itself
    last = tutorial.turns[-1]
    assert last.done and last.events == ("GoodGoal",)
    kinds = [k for t in tutorial.turns for k in t.events]
    assert kinds.count("GoodGoalMulti") == 2
    assert "BadGoal" not in kinds and "DeathZone" not in kinds and "hot_zone" in kinds
    size = sum(p.stat().st_size for p in TUTORIAL.iterdir())
    assert size < 2_000_000


def test_tutorial_arena_shows_every_testbed_object_type(tutorial):
    from llm_aai.arena import load_config

    config = load_config(tutorial.arena_path)
    names = {item.name for _, arena in config.arenas for item in arena.items}
    assert {"Wall", "WallTransparent", "Ramp", "CylinderTunnel", "Cardbox1", "Cardbox2",
            "DeathZone", "HotZone", "GoodGoal", "GoodGoalMulti", "BadGoal"} <= names
    assert names & {"UObject", "LObject"}
    repo_arena = Path(__file__).resolve().parents[2] / "arenas" / "tutorial.yaml"
    assert repo_arena.read_text(encoding="utf-8") == tutorial.arena_yaml


def test_tutorial_replays_to_the_same_health_sequence(tutorial):
    env = AnimalAIEnv(resolution=64)
    try:
        played = list(play_scripts(env, tutorial.scripts, seed=tutorial.source["seed"],
                                   arena=tutorial.arena_path))
    finally:
        env.close()
    assert len(played) == len(tutorial.turns)
    for recorded, again in zip(tutorial.turns, played, strict=True):
        assert again.health == pytest.approx(recorded.health, abs=1e-3), recorded.turn
        assert again.reward == pytest.approx(recorded.reward, abs=1e-5), recorded.turn
        assert again.events == recorded.events and again.done == recorded.done


def test_health_texts_match_the_turn_messages(tutorial):
    messages = load_turn_messages("icl")
    assert tutorial.turns[0].text == messages.initial(tutorial.turns[0].health)
    for turn in tutorial.turns[1:-1]:
        assert turn.text == messages.observation(turn.health)
        assert turn.preamble == messages.preamble


def test_a_changed_frame_is_detected(tmp_path):
    copy = tmp_path / "tutorial"
    shutil.copytree(TUTORIAL, copy)
    (copy / "turn-003-0.png").write_bytes((copy / "turn-004-0.png").read_bytes())
    with pytest.raises(ExampleError, match="turn-003-0.png"):
        load_example(copy)


def test_unknown_example_lists_the_known_ones():
    with pytest.raises(ExampleError, match="tutorial-v1"):
        load_example("no-such-example")


def test_icl_prompt_carries_the_example_and_react_is_unchanged(tutorial):
    react, icl = load_prompt("react"), load_prompt("icl")
    assert react.example is None and react.prelude == ()
    assert "example" not in react.extra_manifest()
    assert icl.text.startswith(react.text.rstrip("\n"))
    assert "WORKED EXAMPLE" in icl.text and icl.sha256 != react.sha256
    extra = icl.extra_manifest()["example"]
    assert extra["name"] == "tutorial-v1" and extra["sha256"] == tutorial.sha256
    prelude = icl.prelude
    assert [p.reply for p in prelude] == list(tutorial.scripts)
    assert len(prelude[0].turn.images) == 3
    assert prelude[0].turn.text == "Your remaining health is 99.9."


def _fake_episode(tmp_path):
    """A logged episode as the runner writes it: turn 0, reply records, a closing record."""
    store = RunStore(tmp_path / "run", FrameFormat("png"))  # lossless, to compare pixels
    writer = store.start_episode("01-01-01_t1")
    rng = np.random.default_rng(1)
    frames = [rng.integers(0, 256, (32, 32, 3), dtype=np.uint8) for _ in range(6)]
    sent = [writer.save_frame(1, i, frames[i]) for i in range(3)]
    writer.write_turn(TurnRecord(turn=0, sent_text="", actions=((0, 0),) * 49, steps=49,
                                 health=97.06, reward=-0.0294))
    writer.write_turn(TurnRecord(turn=1, sent_text="Your remaining health is 99.9.",
                                 sent_preamble="Observation captured.", sent_images=tuple(sent),
                                 reply="Go(5);", health=96.5, reward=-0.003, steps=5))
    writer.write_turn(TurnRecord(turn=2, sent_text="Your remaining health is 96.5.",
                                 sent_preamble="Observation captured.",
                                 sent_images=(writer.save_frame(2, 0, frames[3]),),
                                 reply="Jump;", parse_error="unknown command 'Jump'",
                                 health=96.4, reward=-0.0006, steps=1))
    writer.write_turn(TurnRecord(turn=3, sent_text="Your remaining health is 96.4.",
                                 sent_preamble="feedback\n\nObservation captured.",
                                 sent_images=(writer.save_frame(3, 0, frames[4]),),
                                 reply="Go(9);", health=99.0, reward=0.99, steps=9,
                                 events=({"kind": "GoodGoal", "reward": 0.999, "step": 60},),
                                 terminated=True))
    writer.write_turn(TurnRecord(turn=4, sent_text="The level is over.",
                                 sent_images=(writer.save_frame(4, 0, frames[5]),),
                                 health=99.0, terminated=True))
    writer.finish(EpisodeResult(episode_id="01-01-01_t1", task_id="01-01-01", level=1, trial=1,
                                seed=7, agent="human", passed=True, reward=0.98, pass_mark=0.0,
                                final_health=99.0, scripts_used=3, invalid_replies=1,
                                end_reason="good_goal", steps=64))
    return writer.directory, frames


def test_example_from_a_logged_episode_keeps_the_conversation_verbatim(tmp_path):
    episode, frames = _fake_episode(tmp_path)
    example = example_from_episode(episode, name="mine")
    assert example.scripts == ("Go(5);", "Jump;", "Go(9);")
    start = example.turns[0]  # the health shown then is only in the text, not turn 0's 97.06
    assert start.steps == 49 and start.health is None
    assert start.text == "Your remaining health is 99.9."
    assert example.source["agent"] == "human" and example.source["seed"] == 7
    prelude = example.prelude()
    assert [p.reply for p in prelude] == ["Go(5);", "Jump;", "Go(9);"]
    np.testing.assert_array_equal(prelude[0].turn.images[2], frames[2])
    np.testing.assert_array_equal(prelude[2].turn.images[0], frames[4])
    assert prelude[2].turn.preamble.startswith("feedback")
    assert example.turns[2].error == "unknown command 'Jump'"
    assert example.turns[3].done and example.turns[3].events == ("GoodGoal",)
    assert example.turns[3].text == "The level is over."
    saved = example.save(tmp_path / "example")
    assert saved.sha256 and [p.reply for p in saved.prelude()] == list(example.scripts)
    np.testing.assert_array_equal(saved.turns[0].frames[1], frames[1])


def test_example_command_writes_a_loadable_example(tmp_path, capsys):
    episode, _ = _fake_episode(tmp_path)
    assert main([str(episode), "--out", str(tmp_path / "ex"), "--resolution", "16"]) == 0
    report = json.loads(capsys.readouterr().out)
    example = load_prompt("icl", example=tmp_path / "ex").example
    assert example.sha256 == report["sha256"] and example.turns[0].frames[0].shape == (16, 16, 3)
    assert main([str(tmp_path / "nothing"), "--out", str(tmp_path / "x")]) == 1
    assert "error:" in capsys.readouterr().err


@pytest.mark.parametrize("planted", ["absolute", "climbing", "symlink"])
def test_an_example_is_not_built_from_a_frame_outside_the_episode(tmp_path, planted):
    """An episode from elsewhere naming a file of this machine as a frame: no example (which
    would carry that image into every prompt it is used in) is made from it."""
    episode, _ = _fake_episode(tmp_path)
    secret = tmp_path / "secret.png"
    log = episode / "turns.jsonl"
    records = [json.loads(line) for line in log.read_text().splitlines()]
    shown = next(r for r in records if r["sent_images"])
    secret.write_bytes((episode / shown["sent_images"][0]).read_bytes())
    if planted == "absolute":
        shown["sent_images"][0] = str(secret)
    elif planted == "climbing":
        shown["sent_images"][0] = "../../../secret.png"
    else:
        (episode / shown["sent_images"][0]).unlink()
        (episode / shown["sent_images"][0]).symlink_to(secret)
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    with pytest.raises(ExampleError, match=rf"turn {shown['turn']}: frame"):
        example_from_episode(episode, name="leak")
