from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from llm_aai.agents import HeuristicAgent, TurnInput
from llm_aai.agents.vision import Camera, go_steps_for_distance
from llm_aai.script import Go, Think, Turn, parse_script


def load(recording_dir, name: str) -> np.ndarray:
    return np.asarray(Image.open(recording_dir / "observations" / name).convert("RGB"))


def plan(image: np.ndarray, seed: int = 0):
    agent = HeuristicAgent()
    agent.start_episode("", seed)
    reply = agent.act(TurnInput([image], "Your remaining health is 90.0."))
    return parse_script(reply.text, mode="strict").commands


def moves(commands):
    return [c for c in commands if not isinstance(c, Think)]


@pytest.mark.parametrize(("frame", "low", "high", "recorded"), [
    ("obs-16.15.jpg", 24, 36, 30),    # big yellow ball to the right; the expert turned 30
    ("obs-40.15.jpg", -42, -24, -30),  # green ball to the left; the expert turned -30
])
def test_turns_toward_the_visible_ball(recording_dir, frame, low, high, recorded):
    commands = moves(plan(load(recording_dir, frame)))
    assert isinstance(commands[0], Turn) and low <= commands[0].degrees <= high
    assert abs(commands[0].degrees - recorded) <= 6
    assert isinstance(commands[1], Go) and commands[1].steps > 0


@pytest.mark.parametrize(("frame", "recorded_go"), [
    ("obs-17.5.jpg", 5), ("obs-19.15.jpg", 9), ("obs-41.5.jpg", 10),
])
def test_runs_through_a_centred_ball(recording_dir, frame, recorded_go):
    commands = moves(plan(load(recording_dir, frame)))
    go = commands[-1]
    assert isinstance(go, Go)
    assert all(abs(c.degrees) <= 6 for c in commands if isinstance(c, Turn))
    assert recorded_go - 1 <= go.steps <= recorded_go + 2  # the expert's run collected it


@pytest.mark.parametrize("frame", ["obs-9.10.jpg", "obs-12.15.jpg", "obs-26.7.jpg"])
def test_explores_when_no_food_is_visible(recording_dir, frame):
    commands = moves(plan(load(recording_dir, frame)))
    assert len(commands) == 1 and isinstance(commands[0], Turn)
    assert 60 <= abs(commands[0].degrees) <= 90


def test_same_seed_same_scripts(recording_dir):
    frames = [load(recording_dir, f) for f in ("obs-9.10.jpg", "obs-10.15.jpg", "obs-11.9.jpg",
                                               "obs-12.15.jpg", "obs-13.9.jpg", "obs-15.7.jpg",
                                               "obs-16.15.jpg")]

    def run(seed):
        agent = HeuristicAgent()
        agent.start_episode("", seed)
        return [agent.act(TurnInput([f], "h")).text for f in frames]

    assert run(3) == run(3)
    assert any(a != b for a, b in zip(run(3), run(4), strict=True))


def disc(image, camera, col, distance, diameter, colour):
    """Paint a ball of ``diameter`` metres resting on the floor ``distance`` m ahead."""
    radius = camera.focal * diameter / 2 / distance
    centre_row = camera.row_of_distance(distance) - radius
    yy, xx = np.mgrid[: image.shape[0], : image.shape[1]]
    image[(yy - centre_row) ** 2 + (xx - col) ** 2 <= radius**2] = colour


def synthetic(red_col: int | None, size: int = 256) -> np.ndarray:
    """Sky, sandy floor, a yellow ball 6 m ahead at column 150, maybe a red one at 2 m."""
    camera = Camera(size, size)
    image = np.zeros((size, size, 3), dtype=np.uint8)
    image[: size // 2] = (124, 156, 209)
    image[size // 2:] = (216, 183, 132)
    disc(image, camera, 150, 6.0, 1.0, (247, 220, 103))
    if red_col is not None:
        disc(image, camera, red_col, 2.0, 1.0, (207, 89, 89))
    return image


def test_steps_around_red_in_the_path():
    clear = moves(plan(synthetic(None)))
    assert isinstance(clear[-1], Go) and go_steps_for_distance(6.0) <= clear[-1].steps <= 12
    blocked = moves(plan(synthetic(185)))
    bearing = Camera(256, 256).bearing(150)
    turn = next(c for c in blocked if isinstance(c, Turn))
    assert turn.degrees < bearing - 20  # red to the right of the path: veer left
    mirrored = moves(plan(synthetic(115)))
    turn = next(c for c in mirrored if isinstance(c, Turn))
    assert turn.degrees > bearing + 20  # red to the left: veer right
    far_off = moves(plan(synthetic(250)))
    assert far_off == clear  # red well outside the path changes nothing


def test_dark_frame_keeps_moving():
    commands = moves(plan(np.zeros((64, 64, 3), dtype=np.uint8)))
    assert commands == [Go(5)]


def test_go_steps_inverse_of_speed_table():
    assert go_steps_for_distance(0) == 0
    assert go_steps_for_distance(2.8) == 5
    assert go_steps_for_distance(43.0) == 35
    assert go_steps_for_distance(35.0) == 30
    assert go_steps_for_distance(1000.0) == 35
    distances = np.linspace(0.1, 43, 100)
    steps = [go_steps_for_distance(d) for d in distances]
    assert steps == sorted(steps)


def test_camera_geometry_matches_the_unity_calibration():
    camera = Camera(512, 512)
    assert camera.focal == pytest.approx(214.8, abs=0.1)
    assert camera.bearing(256) == 0
    assert camera.bearing(512) == pytest.approx(50.0, abs=0.2)
    assert camera.floor_distance(200) is None
    assert camera.floor_distance(camera.row_of_distance(4.0)) == pytest.approx(4.0, rel=0.02)
