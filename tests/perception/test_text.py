"""The text observation words what the eye sees, in the prompt's words, deterministically."""

import numpy as np
import pytest

from llm_aai.agents.text_reading import read_view
from llm_aai.perception import NOTHING, describe
from llm_aai.perception.words import colour_name, degrees_side, metres
from llm_aai.sim import Simulator
from tests.helpers.arenas import arena, obj


@pytest.fixture
def look():
    sims = []

    def make(placed):
        sim = Simulator(render=False)
        sim.load(placed, np.random.default_rng(0))
        sims.append(sim)
        return sim.look()

    return make


@pytest.mark.parametrize(("value", "said"), [(0.84, "0.8"), (2.96, "3"), (6.3, "6.5"),
                                             (7.74, "7.5"), (12.4, "12"), (31.6, "32")])
def test_lengths_are_rounded_as_said_aloud(value, said):
    assert metres(value) == said


def test_bearings_name_their_side():
    assert degrees_side(12.4) == "12° right"
    assert degrees_side(-7.6) == "8° left"
    assert degrees_side(0.3) == "straight ahead"


def test_colours_are_named_by_the_nearest_palette_word():
    assert colour_name((0.0, 0.0, 1.0)) == "blue"
    assert colour_name((0.6, 0.6, 0.6)) == "grey"


def test_egocentric_text_lists_objects_nearest_first_in_the_prompts_words(look):
    eye, seen = look(arena(
        obj("GoodGoal", (23.0, 0.0, 28.0), (1.0, 1.0, 1.0)),
        obj("BadGoal", (17.0, 0.0, 24.0), (0.8, 0.8, 0.8)),
        obj("DeathZone", (20.0, 0.0, 33.0), (4.0, 0.0, 2.0)),
        obj("Wall", (26.0, 0.0, 36.0), (4.0, 2.0, 1.0), color=(0.0, 0.0, 1.0)),
    ))
    text = describe(seen, eye)
    lines = text.splitlines()
    assert lines[0] == "You see:"
    assert lines[1].startswith("- a red ball (0.8 m across), 5 m away, 37° left")
    assert lines[2].startswith("- a green ball (1 m across), 8.5 m away, 21° right")
    assert lines[3].startswith("- a red death zone (4 m by 2 m on the floor), 13 m away")
    assert lines[4].startswith("- a blue wall (4 m wide, 2 m tall, 1 m deep), 17 m away, 21° right")
    assert describe(seen, eye) == text  # deterministic


def test_the_decoys_and_the_bad_multi_have_their_colour_words(look):
    eye, seen = look(arena(
        obj("DecoyGoal", (17.0, 0.0, 25.0), (1.0, 1.0, 1.0)),
        obj("BadGoalMulti", (23.0, 0.0, 28.0), (1.0, 1.0, 1.0)),
        obj("DecoyGoalMulti", (20.0, 0.0, 33.0), (1.0, 1.0, 1.0)),
    ))
    lines = describe(seen, eye).splitlines()
    assert lines[1].startswith("- a grey ball (1 m across)")
    assert lines[2].startswith("- an orange ball (1 m across)")
    assert lines[3].startswith("- a grey ball (1 m across)")


def test_allocentric_text_gives_the_agents_pose_and_arena_coordinates(look):
    eye, seen = look(arena(obj("GoodGoal", (23.0, 0.0, 28.0), (1.0, 1.0, 1.0)), yaw=90.0))
    assert "green ball" not in describe(seen, eye, perspective="allocentric")  # it is to the left
    eye, seen = look(arena(obj("GoodGoal", (28.0, 0.0, 23.0), (1.0, 1.0, 1.0)), yaw=90.0))
    text = describe(seen, eye, perspective="allocentric")
    assert text.splitlines()[0].startswith("You are at x 20, z 20, facing 90°")
    assert "- a green ball (1 m across), centre at x 28, z 23" in text


def test_a_ball_on_a_platform_is_said_to_be_raised_and_above_eye_level(look):
    eye, seen = look(arena(obj("Wall", (20.0, 0.0, 28.0), (3.0, 2.0, 3.0)),
                           obj("GoodGoal", (20.0, 2.0, 28.0), (1.0, 1.0, 1.0))))
    line = next(s for s in describe(seen, eye).splitlines() if "green ball" in s)
    assert "raised 2 m off the floor" in line and "above eye level" in line


def test_a_ball_behind_glass_is_said_to_be_seen_through_it(look):
    eye, seen = look(arena(obj("WallTransparent", (20.0, 0.0, 25.0), (6.0, 3.0, 0.5)),
                           obj("GoodGoal", (20.0, 0.0, 30.0), (1.0, 1.0, 1.0))))
    text = describe(seen, eye)
    assert "- a transparent wall (6 m wide, 3 m tall, 0.5 m deep)" in text
    assert "green ball (1 m across), 10 m away, straight ahead, seen through glass" in text


def test_darkness_and_an_empty_view_have_their_own_words(look):
    eye, seen = look(arena(obj("GoodGoal", (20.0, 0.0, 28.0), (1.0, 1.0, 1.0))))
    assert describe(seen, eye, dark=True) == NOTHING
    eye, seen = look(arena())
    assert describe(seen, eye) == "You see no objects, only the floor and the fence."
    with pytest.raises(ValueError, match="perspective must be one of"):
        describe(seen, eye, perspective="north-up")


@pytest.mark.parametrize("yaw", [0.0, 90.0, 200.0])
def test_an_allocentric_view_reads_back_as_the_egocentric_one(look, yaw):
    """The heuristic plays both frames: coordinates and pose become distance and bearing."""
    eye, seen = look(arena(obj("GoodGoal", (23.0, 0.0, 28.0), (1.0, 1.0, 1.0)),
                           obj("BadGoal", (17.0, 0.0, 24.0), (0.8, 0.8, 0.8)),
                           obj("GoodGoal", (16.0, 0.0, 13.0), (1.0, 1.0, 1.0)),
                           obj("GoodGoal", (27.0, 0.0, 15.0), (1.0, 1.0, 1.0)), yaw=yaw))
    assert seen  # something in view at every heading
    ego = read_view(describe(seen, eye))
    allo = read_view(describe(seen, eye, perspective="allocentric"))
    assert [o.noun for o in allo.objects] == [o.noun for o in ego.objects]
    for a, e in zip(allo.objects, ego.objects, strict=True):
        assert a.distance == pytest.approx(e.distance, rel=0.1, abs=0.3)
        assert a.bearing == pytest.approx(e.bearing, abs=3.0)


def test_the_changing_goals_are_named_by_what_they_do(look):
    from dataclasses import replace

    from llm_aai.arena.timings import GoalTimings

    timings = GoalTimings(1.0, 0.5, -0.005, 0.0)
    eye, seen = look(arena(
        replace(obj("DecayGoal", (17.0, 0.0, 25.0), (0.999,) * 3), timings=timings),
        replace(obj("RipenGoal", (23.0, 0.0, 28.0), (0.999,) * 3), timings=timings),
    ))
    lines = describe(seen, eye).splitlines()
    assert lines[1].startswith("- a decaying ball (1 m across)")
    assert lines[2].startswith("- a ripening ball (1 m across)")
