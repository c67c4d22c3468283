"""Known answers of the rule-based extractor: the paper's quotes, the heuristic's Thinks, more."""

from __future__ import annotations

import pytest

from llm_aai.grounding import Claim, extract


def _brief(claims: list[Claim]) -> list[tuple]:
    """(kind, subject, sees, side, degrees, metres, rising, values) of each claim."""
    return [(c.kind, c.subject, c.sees, c.side, c.degrees, c.metres, c.rising, c.values)
            for c in claims]


def test_gpt4os_health_claim_is_a_rise_and_a_collection():
    claims = extract("My health has increased, confirming the collection.")
    assert _brief(claims) == [
        ("health_trend", "ball", True, None, None, None, True, None),
        ("reward", "ball", True, None, None, None, True, None),
    ]
    assert claims[1].type is None  # "the collection" of anything


def test_claudes_claim_is_a_collection_and_a_comparison_of_two_values():
    claims = extract("I have successfully collected the green ball as my health has increased "
                     "from 84.2 to 35.4")
    assert [(c.kind, c.rising, c.values) for c in claims] == [
        ("health_comparison", True, (84.2, 35.4)), ("reward", True, None)]
    assert claims[1].subject == "green ball"


def _short(claim: Claim) -> str:
    """A claim in a few words: kind, subject, then its side, degrees, metres or direction.

    ``(belief)`` marks a claim not said of the view (``sees`` false).
    """
    words = [claim.kind]
    if claim.kind in ("health_trend", "health_comparison"):
        words.append("up" if claim.rising else "down")
    elif claim.kind == "reward":
        words += ["any ball" if claim.type is None else claim.subject,
                  "collected" if claim.rising else "not collected"]
    else:
        words.append(claim.subject)
        words += [f"{v:+g}" if isinstance(v, float) else v for v in (claim.side, claim.degrees)
                  if v is not None]
        words += [f"{claim.metres:g} m"] if claim.metres is not None else []
        words += [] if claim.sees else ["(belief)"]
    return " ".join(words)


KNOWN_ANSWERS = [  # (Think, its claims in order), each checked by hand
    # the heuristic agent's Thinks
    ("I see no yellow or green ball. I turn to search.",
     ["not_seen yellow ball", "not_seen green ball"]),
    ("No food in sight after a full turn. About 18 m of floor is free ahead, so I move to a "
     "new spot.", ["not_seen food"]),
    ("It is dark. I keep going the way I was facing.", []),
    ("A green ball is at -43 degrees, about 7.7 m away. I face it and run through it.",
     ["seen green ball", "bearing green ball -43", "distance green ball 7.7 m"]),
    ("A yellow ball is at +12 degrees, about 5.5 m, but something red is in the way. I step "
     "around it first.",
     ["seen yellow ball", "bearing yellow ball +12", "distance yellow ball 5.5 m"]),
    # the hostile audit's three (#51): a negation or a side read outside its clause, a block
    ("My health went down a little and I have not collected anything yet",
     ["health_trend down", "reward any ball not collected"]),
    ("There is no green ball on my right", ["not_seen green ball right"]),
    ("There is a grey block to my left", ["seen grey box", "bearing grey box left"]),
    # a negation in another clause than the health claim's
    ("I have not moved, but my health increased.", ["health_trend up"]),
    ("I haven't found the ball yet but my health has increased.", ["health_trend up"]),
    ("My health did not go down, it went up.", ["health_trend up"]),
    ("My health has not increased, and I see no food.", ["health_trend down", "not_seen food"]),
    ("I don't see any food, and my health is dropping.", ["health_trend down",
                                                          "not_seen food"]),
    ("I lost the green ball, but my health is fine.", []),
    # no X on a side: the side stays with the negated claim, and only in its clause
    ("No red ball to my left.", ["not_seen red ball left"]),
    ("I don't see a wall ahead.", ["not_seen wall ahead"]),
    ("I don't see the green ball on my right anymore.", ["not_seen green ball right"]),
    ("There's no yellow ball in front of me, only a wall.", ["not_seen yellow ball ahead"]),
    ("There aren't any balls to my right.", ["not_seen ball right"]),
    ("I see no wall and no ramp on my left.", ["not_seen wall", "not_seen ramp left"]),
    ("I see no green ball, so I turn right.", ["not_seen green ball"]),
    ("There is no green ball on my right; the green ball is on my left.",
     ["not_seen green ball right", "seen green ball", "bearing green ball left"]),
    ("I can't see the red ball, but the green ball is on my left.",
     ["not_seen red ball", "seen green ball", "bearing green ball left"]),
    # isn't: of the view, or of the object's place
    ("The green ball isn't visible.", ["not_seen green ball"]),
    ("There isn't a ramp here.", ["not_seen ramp"]),
    ("The green ball isn't on my left.", ["not_seen green ball left (belief)"]),
    ("The yellow ball is not behind me.", ["not_seen yellow ball behind (belief)"]),
    # nothing
    ("I see nothing but a grey wall.", ["seen grey wall"]),
    ("Nothing is on my right, but a green ball is straight ahead.",
     ["seen green ball", "bearing green ball ahead"]),
    # not far is near, not a negation
    ("The green ball is not far ahead.", ["seen green ball", "bearing green ball ahead"]),
    ("The green ball is not far away, about 3 m.", ["seen green ball",
                                                    "distance green ball 3 m"]),
    # two negations in one clause cancel
    ("It is not true that there is no green ball.", ["seen green ball"]),
    ("It is not the case that I see no wall on my left.", ["seen wall", "bearing wall left"]),
    # blocks, cubes and boxes are boxes; walls are walls (verify matches a block-shaped Wall
    # item as either)
    ("I see a grey cube ahead.", ["seen grey box", "bearing grey box ahead"]),
    ("A grey box sits on my right.", ["seen grey box", "bearing grey box right"]),
    ("A grey wall stands on my left.", ["seen grey wall", "bearing grey wall left"]),
]


@pytest.mark.parametrize(("think", "expected"), KNOWN_ANSWERS)
def test_known_answers(think, expected):
    assert [_short(c) for c in extract(think)] == expected


def test_the_heuristics_numbers_are_read_with_their_sign():
    seen, bearing, distance = extract("A green ball is at -43 degrees, about 7.7 m away.")
    assert (bearing.degrees, distance.metres) == (-43.0, 7.7)
    assert seen.sees and bearing.sees


@pytest.mark.parametrize(("think", "side", "degrees"), [
    ("I can see a red ball to my left.", "left", None),
    ("There is a ramp on the right side.", "right", None),
    ("I see a grey wall straight ahead.", "ahead", None),
    ("I see a green ball 30 degrees to the left.", None, -30.0),
    ("The green ball is at 12° right.", None, 12.0),
])
def test_bearings_in_words_and_degrees(think, side, degrees):
    bearing = next(c for c in extract(think) if c.kind == "bearing")
    assert (bearing.side, bearing.degrees) == (side, degrees)


@pytest.mark.parametrize(("think", "subject"), [
    ("I see a transparent wall.", "transparent wall"),
    ("I notice a tunnel ahead.", "tunnel"),
    ("There is a pushable box in front of me.", "box"),
    ("I can see the red death zone.", "red zone"),
    ("I see an orange hot zone.", "orange zone"),
    ("I spot a blue ramp.", "blue ramp"),
    ("I see a gray wall.", "grey wall"),
])
def test_every_object_type_is_named(think, subject):
    assert extract(think)[0].subject == subject


def test_a_belief_about_where_an_unseen_object_is_is_not_a_sighting():
    (bearing,) = extract("The green ball must be behind me.")
    assert (bearing.kind, bearing.side, bearing.sees) == ("bearing", "behind", False)
    (seen,) = extract("The green ball is probably somewhere in the arena.")
    assert (seen.kind, seen.sees) == ("seen", False)


@pytest.mark.parametrize("think", [
    "I need to find the green ball.",
    "I will turn left to search for food.",
    "Collecting the yellow balls first is wise.",
    "I should avoid the red ball.",
    "My goal is to increase my health.",
])
def test_intentions_and_plans_make_no_claim(think):
    assert extract(think) == []


def test_negated_and_vanished_objects_are_not_seen():
    assert [c.kind for c in extract("The green ball is not visible anymore.")] == ["not_seen"]
    assert [c.kind for c in extract("I can't see the yellow ball.")] == ["not_seen"]


def test_health_trends_in_other_words():
    assert [c.rising for c in extract("My health is dropping.")] == [False]
    assert [c.rising for c in extract("My health has not increased.")] == [False]
    (claim,) = extract("Health went from 63.3 to 59.7, a decrease.")
    assert (claim.kind, claim.rising, claim.values) == ("health_comparison", False, (63.3, 59.7))


def test_a_claim_the_verifier_cannot_read_is_refused_at_once():
    with pytest.raises(ValueError, match="a distance claim needs metres"):
        Claim("distance", "far away", type="ball")
    with pytest.raises(ValueError, match="claim kind must be one of"):
        Claim("colour", "green")


def test_objects_joined_to_a_sighting_are_seen_with_their_own_places():
    claims = extract("I can see a red ball to my left and a grey wall straight ahead, about 4 m "
                     "away.")
    assert [(c.kind, c.subject, c.side, c.metres) for c in claims] == [
        ("seen", "red ball", None, None), ("bearing", "red ball", "left", None),
        ("seen", "grey wall", None, None), ("bearing", "grey wall", "ahead", None),
        ("distance", "grey wall", None, 4.0)]
    claims = extract("A yellow ball lies straight ahead and a grey wall stands on my right.")
    assert [(c.subject, c.side) for c in claims if c.kind == "bearing"] == [
        ("yellow ball", "ahead"), ("grey wall", "right")]


def test_the_worked_examples_turn_is_not_a_bearing():
    # "30 degrees to my left" is how far to turn, not where the ball is
    claims = extract("The green ball is in view, I should turn about 30 degrees to my left to "
                     "get it")
    assert [(c.kind, c.subject, c.sees) for c in claims] == [("seen", "green ball", True)]


@pytest.mark.parametrize("think", [
    "I should collect as many yellow balls as possible, they'll increase my health!",
    "I will drive through it and then check that my health went up",
    "I shouldn't stand on the orange zone for too long. I'll lose health more quickly!",
    "Touching the green ball ends the level, so I will go through it.",
])
def test_plans_about_health_and_zones_are_not_reports(think):
    assert extract(think) == []


def test_a_report_of_health_followed_by_a_plan_is_still_a_report():
    (claim,) = extract("My health has decreased, so I will move forward.")
    assert (claim.kind, claim.rising) == ("health_trend", False)


def test_something_somewhere_on_a_side_is_a_belief_about_its_bearing():
    (claim,) = extract("The red ball is somewhere to my right: I'll make sure to get it in view")
    assert (claim.kind, claim.side, claim.sees) == ("bearing", "right", False)
