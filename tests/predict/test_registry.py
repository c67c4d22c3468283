"""Every registered kind: well-formed questions with one truth, and no trace in the episode."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from llm_aai.env import AnimalAIEnv
from llm_aai.predict import KINDS, Asking, Sightings, ask, kind
from llm_aai.protocol import Episode
from tests.helpers.arenas import write_arena
from tests.helpers.backends import ProtocolOnly
from tests.predict.conftest import TWO_BALLS, arena_text, item
from tests.predict.test_dynamics import AWAY

SCENES = {
    "own_outcome": (TWO_BALLS, []),
    "counterfactual": (TWO_BALLS, ["Turn(-42);"]),
    "permanence": (TWO_BALLS, ["Turn(90);"]),
    "dynamics": (AWAY, []),
}
"""For each kind, an arena and the replies after which it can be asked."""

MIXED = arena_text(
    item("Agent", 20, 20),
    item("GoodGoal", 20, 32),
    item("BadGoal", 20, 12),
    item("GoodGoalMulti", 28, 24),
    item("DeathZone", 12, 22, size=(3, 0, 4)),
    item("HotZone", 22, 27, size=(3, 0, 2)),
    item("GoodGoalBounce", 38, 30, rotation=-90),  # rolls toward -x, in view at the start
    item("Wall", 26, 14, size=(4, 2, 1)),
)
REPLIES = ["Turn(90);", "Turn(-180);Go(3);", "Think(\"a\");Go(1000);", "Turn(45);Go(5);",
           "Turn(60);Go(8);", "Go(20);"]


def test_every_kind_has_a_scene_here():
    assert set(SCENES) == set(KINDS)


@pytest.mark.parametrize("name", sorted(SCENES))
def test_each_kind_asks_a_well_formed_question_with_one_truth(start, name):
    text, replies = SCENES[name]
    episode = start(text)
    sightings = Sightings()
    sightings.record(episode)
    for reply in replies:
        episode.play(reply)
        sightings.record(episode)
    question = ask(name, Asking(episode, "Go(2);", sightings))
    assert question.kind == name
    letters = [letter for letter, _ in question.choices]
    assert letters == [chr(ord("A") + i) for i in range(len(letters))]
    assert [text for _, text in question.choices].count(question.true_text) == 1
    assert question.chance == pytest.approx(1 / len(question.choices))
    lines = question.prompt().splitlines()
    assert lines[0] == question.text
    assert lines[1:1 + len(letters)] == [f"{letter}) {words}" for letter, words in question.choices]
    asked = question.asked_in
    assert asked.turn == len(replies) + 1
    assert asked.in_view == tuple({"name": s.name, "distance": s.distance,
                                   "bearing": s.bearing} for s in episode.env.in_view())
    data = json.loads(json.dumps(question.to_json()))
    assert data["truth"] == question.truth and data["chance"] == question.chance
    assert data["asked_in"]["turn"] == asked.turn


def _episode(path, physics_build, *, asking):
    """Play ``REPLIES``; with ``asking``, every kind is asked before each reply."""
    env = AnimalAIEnv(path, resolution=64, backend_kwargs={"physics_build": physics_build})
    try:
        episode = Episode(env)
        episode.start(seed=3)
        sightings, rng = Sightings(), random.Random(1)
        sightings.record(episode)
        played, asked = [], []
        for reply in REPLIES:
            if not episode.wants_reply:
                break
            if asking:
                asked += [q.kind for name in KINDS
                          if (q := ask(name, Asking(episode, reply, sightings, rng)))]
            turn = episode.play(reply)
            sightings.record(episode)
            played.append((
                [np.ascontiguousarray(o["image"]).tobytes() for o in turn.observations],
                turn.outcome.health, turn.outcome.reward, turn.outcome.steps,
                [tuple(info["position"]) for info in turn.outcome.infos]))
        return played, asked
    finally:
        env.close()


@pytest.mark.parametrize("physics_build", ["3.x", "2019"])
def test_asking_leaves_the_episode_exactly_as_it_was(tmp_path, physics_build):
    """Frames, health, rewards, steps and positions are those of the same replies played with
    no question asked."""
    path = write_arena(tmp_path, MIXED)
    plain, none = _episode(path, physics_build, asking=False)
    with_questions, asked = _episode(path, physics_build, asking=True)
    assert none == []
    assert set(asked) == set(KINDS)  # every kind was asked at least once
    assert with_questions == plain


def test_an_unknown_kind_is_named_with_the_known_ones():
    with pytest.raises(KeyError, match="'guess'.*own_outcome, counterfactual"):
        kind("guess")


def test_a_backend_that_cannot_say_where_things_are_says_so(tmp_path):
    env = AnimalAIEnv(write_arena(tmp_path, TWO_BALLS), resolution=64, backend=ProtocolOnly())
    try:
        episode = Episode(env)
        episode.start(seed=0)
        for name in ("permanence", "dynamics", "counterfactual"):
            with pytest.raises(NotImplementedError, match="embedded simulator"):
                ask(name, Asking(episode, "Go(1);"))
        with pytest.raises(NotImplementedError, match="embedded simulator"):
            Sightings().record(episode)
    finally:
        env.close()
