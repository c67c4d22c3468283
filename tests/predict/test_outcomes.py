"""Own outcome and counterfactual: what a script touches first, known before it runs."""

from __future__ import annotations

import random

import pytest

from llm_aai.arena.objects import OBJECTS, Kind
from llm_aai.predict import Asking, ask
from llm_aai.predict.outcomes import OUTCOMES, outcome_text, toward
from llm_aai.protocol.what_if import what_if
from tests.predict.conftest import TWO_BALLS, arena_text, item


@pytest.mark.parametrize(("reply", "touched"), [
    ("Go(10);", "a green ball"),                       # the ball ahead
    ("Turn(180);Go(10);", "a red ball"),               # the ball behind
    ("Turn(-90);Go(10);", "a red death zone"),         # the zone on the left
    ("Turn(90);Go(10);", "none of these before the commands end"),  # a wall in the way
])
def test_own_outcome_is_what_the_live_episode_then_does(start, reply, touched):
    episode = start(TWO_BALLS)
    question = ask("own_outcome", Asking(episode, reply))
    assert question.true_text == touched
    assert [text for _, text in question.choices] == list(OUTCOMES)
    assert question.about == {"script": reply}
    turn = episode.play(reply)  # the live play, after the question
    events = [e.kind for info in turn.outcome.infos for e in info["events"]
              if e.kind != "decay"]
    assert outcome_text(events[0] if events else None) == touched


def test_own_outcome_is_not_asked_about_a_refused_reply(start):
    episode = start(TWO_BALLS)
    assert ask("own_outcome", Asking(episode, "Go(1000);")) is None
    assert ask("own_outcome", Asking(episode, None)) is None


@pytest.mark.parametrize(("distance", "bearing", "script"), [
    (6.0, 0.4, "Go(11);"),  # 9 m: a thirteenth of the way from Go(10)'s 8 m to Go(20)'s 21 m
    (6.0, 31.0, "Turn(30);Go(11);"),  # 31 degrees: five whole steps
    (20.0, -44.0, "Turn(-42);Go(22);"),
    (0.2, 0.0, "Go(6);"),
])
def test_alternatives_face_the_target_in_whole_steps_and_go_past_it(distance, bearing, script):
    assert toward(distance, bearing) == script


def test_counterfactual_toward_the_ball_in_view(start):
    episode = start(TWO_BALLS)
    question = ask("counterfactual", Asking(episode, "Turn(90);Go(3);"))
    assert question.about == {"script": "Go(11);"}  # the green ball is the only one in view
    assert "Go(11);" in question.text and question.true_text == "a green ball"


def test_counterfactual_after_turning_round_is_the_red_ball(start):
    episode = start(TWO_BALLS)
    episode.play("Turn(180);")
    question = ask("counterfactual", Asking(episode, "Go(1);"))
    assert question.true_text == "a red ball"
    assert question.true_text == outcome_text(what_if(episode, question.about["script"])
                                              .first_event)


def test_counterfactual_is_never_the_reply_itself(start):
    episode = start(TWO_BALLS)
    assert ask("counterfactual", Asking(episode, "Go( 11 );")) is None  # the only alternative


def test_counterfactual_draws_among_the_objects_in_view(start):
    episode = start(TWO_BALLS)
    episode.play("Turn(-42);")  # the green ball and the death zone both in view
    asked = {ask("counterfactual", Asking(episode, "Go(1);", rng=random.Random(seed)))
             .true_text for seed in range(8)}
    assert asked == {"a green ball", "a red death zone"}


def test_every_goal_and_the_zones_have_an_outcome_choice():
    touched = {spec.name for spec in OBJECTS.values()
               if spec.kind is Kind.GOAL or spec.name == "DeathZone"} | {"hot_zone"}
    texts = {outcome_text(name) for name in touched}  # none without words
    assert set(OUTCOMES) - {outcome_text(None)} <= texts
    assert outcome_text("BadGoalMulti") == "an orange ball"
    assert outcome_text("DecoyGoalMulti") == "a grey ball"


def test_an_arena_with_newer_balls_offers_their_words_and_tells_them_apart(start):
    episode = start(arena_text(item("Agent", 20, 20), item("DecoyGoal", 20, 26),
                               item("BadGoalMulti", 20, 14), item("GoodGoal", 30, 30)))
    question = ask("own_outcome", Asking(episode, "Go(10);"))
    texts = [text for _, text in question.choices]
    assert texts == [*OUTCOMES[:-1], "a grey ball", "an orange ball", OUTCOMES[-1]]
    assert question.true_text == "a grey ball"  # the decoy ahead
    assert ask("own_outcome", Asking(episode, "Turn(180);Go(10);")).true_text == "an orange ball"


def test_an_event_without_words_is_named():
    with pytest.raises(ValueError, match="'Teleporter'"):
        outcome_text("Teleporter")
