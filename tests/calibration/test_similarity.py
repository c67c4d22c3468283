"""How alike our replay's frames are to Unity's, turn by turn (``calibration.similarity``)."""

from __future__ import annotations

import numpy as np
import pytest

from llm_aai.calibration.fidelity import replay_recording
from llm_aai.calibration.similarity import (
    TurnSimilarity,
    compare_turns,
    format_table,
    frame_similarity,
    ssim,
)
from llm_aai.cli.contact_sheet import main


def _scene(seed: int = 0) -> np.ndarray:
    """A grey image with edges: blocks of random grey on a 128 px grid."""
    blocks = np.random.default_rng(seed).integers(0, 256, size=(16, 16)).astype(np.float64)
    return np.kron(blocks, np.ones((8, 8)))


def test_ssim_of_an_image_with_itself_is_one():
    image = _scene()
    assert ssim(image, image) == pytest.approx(1.0)


def test_ssim_of_two_flat_images_is_the_luminance_term():
    # No variance, no covariance: only (2ab + C1) / (a^2 + b^2 + C1) is left
    c1 = (0.01 * 255) ** 2
    first, second = np.full((64, 64), 100.0), np.full((64, 64), 150.0)
    assert ssim(first, second) == pytest.approx((2 * 100 * 150 + c1)
                                                / (100**2 + 150**2 + c1))


def test_ssim_is_symmetric_and_falls_as_the_view_shifts():
    image = _scene()
    scores = [ssim(image, np.roll(image, shift, axis=1)) for shift in (0, 2, 4, 16)]
    assert scores == sorted(scores, reverse=True) and scores[-1] < 0.5
    other = _scene(1)
    assert ssim(image, other) == pytest.approx(ssim(other, image))


def test_ssim_refuses_images_of_different_shapes():
    with pytest.raises(ValueError, match="differ in shape"):
        ssim(np.zeros((8, 8)), np.zeros((8, 9)))


def test_frame_similarity_brings_ours_to_the_recorded_size():
    recorded = np.zeros((512, 512, 3), np.uint8)
    ours = np.zeros((84, 84, 3), np.uint8)
    assert frame_similarity(recorded, ours) == (0.0, pytest.approx(1.0))


@pytest.fixture(scope="module")
def turns(recording_dir):
    return compare_turns(recording_dir, replay_recording(recording_dir, render=True))


def test_every_turn_of_the_recording_is_compared(turns):
    assert [turn.turn for turn in turns] == list(range(43))
    # Unity's frame after every script but the last, in which its episode ended
    assert all(turn.ssim is not None for turn in turns[:42]) and turns[42].ssim is None
    assert turns[0].recorded_health == 99.9 and turns[41].recorded_health == 89.3


def test_the_replay_looks_like_unity_up_to_the_wall_corner_of_script_36(turns):
    """Scripts 1-35 are where the pose is known to agree within centimetres (test_fidelity):
    every frame there scores at least 0.55 (measured 0.59-0.79); the corner clipped in
    Unity's script 36 is where the views part (measured 0.46)."""
    early = [turn.ssim for turn in turns[1:36]]
    assert min(early) >= 0.55, early
    assert turns[36].ssim < min(early)


@pytest.mark.xfail(strict=True, reason=(
    "issue #52: from script 36 on our agent is elsewhere (it passes the wall corner Unity's "
    "clips, then slides further along the fence in 38); measured SSIM 0.49-0.63 over turns "
    "37-41 against 0.59-0.79 over 1-35"))
def test_the_box_pushing_turns_look_as_much_like_unity_as_the_rest(turns):
    early = [turn.ssim for turn in turns[1:36]]
    assert min(turn.ssim for turn in turns[37:42]) >= min(early)


def test_the_command_prints_the_table_for_every_turn(recording_dir, capsys):
    assert main(["--recording", str(recording_dir)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:5] == ["turn", "health", "Unity", "ours", "MAD"]
    rows = [line.split() for line in lines[1:44]]
    assert [int(row[0]) for row in rows] == list(range(43))
    assert rows[42][1] == "-" and rows[42][-1] == "Go(10)"  # no Unity frame after the last
    assert lines[44].startswith("42 scripts, max health error 0.0")


def test_format_table_marks_what_is_missing():
    table = format_table([TurnSimilarity(3, 'Think("x");Turn(30);', 96.4, None, 18.06, 0.7151)])
    assert table.splitlines()[1].split() == ["3", "96.4", "-", "18.1", "0.715", "Turn(30)"]
