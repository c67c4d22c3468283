"""The verification rules on scenes built by hand: where each verdict's boundary lies."""

from __future__ import annotations

from llm_aai.grounding import Claim, Scene, SceneObject, TurnTruth, extract, verify


def _ball(colour: str, bearing: float, distance: float, visible: bool = True) -> SceneObject:
    return SceneObject(f"{colour} ball", "ball", colour, bearing, distance, visible,
                       bearing - 2.0, bearing + 2.0)


SCENE = Scene((_ball("green", 30.0, 8.0), _ball("red", 0.0, 12.0, visible=False),
               _ball("yellow", 170.0, 5.0, visible=False)))


def _verdict(claim: Claim, truth: TurnTruth | None = None) -> str:
    return verify(claim, truth or TurnTruth(SCENE)).verdict


def test_bearings_hold_within_the_slack_beyond_the_seen_edges():
    claim = Claim("bearing", "", type="ball", colour="green", degrees=41.0)
    assert _verdict(claim) == "true"  # right edge 32, slack 10
    assert _verdict(Claim("bearing", "", type="ball", colour="green", degrees=43.0)) == "false"


def test_distances_hold_within_thirty_percent_or_a_metre():
    assert _verdict(Claim("distance", "", type="ball", colour="green", metres=10.3)) == "true"
    assert _verdict(Claim("distance", "", type="ball", colour="green", metres=10.5)) == "false"


def test_a_hidden_object_claimed_seen_is_false_and_its_truth_says_hidden():
    result = verify(Claim("seen", "", type="ball", colour="red"), TurnTruth(SCENE))
    assert result.verdict == "false"
    assert result.truth == "red ball at +0 deg, 12.0 m, hidden"


def test_an_unseen_object_is_unverifiable_only_when_no_place_is_said():
    belief = Claim("seen", "", type="ball", colour="yellow", sees=False)
    assert _verdict(belief) == "unverifiable"
    placed = Claim("bearing", "", type="ball", colour="yellow", sees=False, side="behind")
    assert _verdict(placed) == "true"
    wrong = Claim("bearing", "", type="ball", colour="yellow", sees=False, side="ahead")
    assert _verdict(wrong) == "false"


def test_in_the_dark_nothing_is_seen():
    dark = TurnTruth(Scene(SCENE.objects, dark=True))
    assert _verdict(Claim("seen", "", type="ball", colour="green"), dark) == "false"
    assert _verdict(Claim("not_seen", "", type="ball", colour="green"), dark) == "true"


def test_food_is_a_green_or_yellow_ball():
    assert _verdict(Claim("not_seen", "", type="ball", colour="food")) == "false"


def test_health_claims_need_the_health_told_before():
    rise = Claim("health_trend", "", rising=True)
    assert _verdict(rise, TurnTruth(SCENE, 59.7, 63.3)) == "false"
    assert _verdict(rise, TurnTruth(SCENE, 63.3, 59.7)) == "true"
    assert _verdict(rise, TurnTruth(SCENE, 99.8, None)) == "unverifiable"


def test_collections_are_read_from_the_turn_just_played():
    events = ({"kind": "GoodGoalMultiBounce", "reward": 1.0, "step": 40},)
    truth = TurnTruth(SCENE, events=events)
    assert _verdict(Claim("reward", "", type="ball", colour="yellow", rising=True), truth) == "true"
    assert _verdict(Claim("reward", "", type="ball", colour="green", rising=True), truth) == "false"
    assert _verdict(Claim("reward", "", rising=False), truth) == "false"


def test_a_negated_claim_about_one_side_is_judged_on_that_side_only():
    # the green ball is visible at +30 (right); the yellow one is behind, unseen
    def absent(colour, side, sees=True):
        return _verdict(Claim("not_seen", "", type="ball", colour=colour, side=side, sees=sees))

    assert absent("green", "left") == "true"
    assert absent("green", "right") == "false"
    assert absent("green", "ahead") == "true"  # +30 is off the ahead band
    assert absent("yellow", "behind") == "true"  # nothing behind is ever in view
    # said of where the ball is ("the yellow ball is not behind me"): seen or not
    assert absent("yellow", "behind", sees=False) == "false"
    assert absent("yellow", "left", sees=False) == "true"
    truth = verify(Claim("not_seen", "", type="ball", colour="green", side="left"),
                   TurnTruth(SCENE)).truth
    assert truth == "green ball at +30 deg, 8.0 m, visible (none on the left)"


def test_the_audits_sentences_get_the_verdict_a_reader_gives():
    """#51: each was judged false while true."""
    fell = TurnTruth(SCENE, health_now=59.7, health_before=63.3)
    claims = extract("My health went down a little and I have not collected anything yet")
    assert [verify(c, fell).verdict for c in claims] == ["true", "true"]
    claims = extract("There is no green ball on my left")  # it is on the right
    assert [_verdict(c) for c in claims] == ["true"]
    assert [_verdict(c) for c in extract("There is no green ball on my right")] == ["false"]


def test_the_newer_balls_are_read_by_their_own_colours():
    # BadGoalMulti starts like BadGoal, DecoyGoalMulti like nothing the old table knew.
    orange = TurnTruth(SCENE, events=({"kind": "BadGoalMulti", "reward": -0.5, "step": 9},))
    assert _verdict(Claim("reward", "", type="ball", colour="orange", rising=True),
                    orange) == "true"
    assert _verdict(Claim("reward", "", type="ball", colour="red", rising=True),
                    orange) == "false"
    grey = TurnTruth(SCENE, events=({"kind": "DecoyGoalMulti", "reward": 0.0, "step": 9},))
    assert _verdict(Claim("reward", "", type="ball", colour="grey", rising=True), grey) == "true"
    assert _verdict(Claim("reward", "", rising=True), grey) == "false"  # a decoy is no food
