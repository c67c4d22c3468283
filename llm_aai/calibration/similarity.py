"""How alike our frame and Unity's are after each script of the recording, turn by turn.

The health the model is told can agree on every turn while the agent stands somewhere else:
the recording's frames are the only record of where Unity's agent was. Two measures, both on
the frames as the model saw them:

- the mean absolute difference of the RGB values (0-255), which any change of colour, light or
  texture moves as much as a change of pose;
- the structural similarity index (SSIM; Wang, Bovik, Sheikh and Simoncelli, IEEE TIP 2004) of
  the two frames' luma at 128 px, with the paper's constants (an 11-tap Gaussian window of
  sigma 1.5, K1 0.01, K2 0.03). SSIM compares local means, contrasts and correlations, so it
  weighs where the edges of walls, boxes and balls are over how their surfaces are shaded,
  which is where a drifted pose shows. 1.0 is identical; unrelated views of this arena score
  about 0.3-0.5.

A trajectory that parts from Unity's shows as a step down in SSIM from one turn on; the table
``python -m llm_aai.calibration`` prints is where to look first.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image
from scipy.ndimage import gaussian_filter

from llm_aai.calibration.fidelity import Replay, read_recorded_frame, read_recording

SSIM_SIZE = 128
"""Both frames are compared at this size: JPEG noise and sub-pixel texture fall away."""

_SIGMA = 1.5
_TRUNCATE = 5 / _SIGMA  # an 11-tap window, as in the SSIM paper
_C1 = (0.01 * 255) ** 2
_C2 = (0.03 * 255) ** 2


def luma(rgb: np.ndarray, size: int = SSIM_SIZE) -> np.ndarray:
    """The frame's luma (ITU-R 601 weights, PIL's "L") at ``size`` px, as float64."""
    image = Image.fromarray(np.asarray(rgb, dtype=np.uint8)).convert("L")
    if image.size != (size, size):
        image = image.resize((size, size), Image.Resampling.BOX)
    return np.asarray(image, dtype=np.float64)


def ssim(first: np.ndarray, second: np.ndarray) -> float:
    """Mean SSIM of two grey images of one shape (0-255 floats)."""
    if first.shape != second.shape:
        raise ValueError(f"images differ in shape: {first.shape} and {second.shape}")

    def blur(image: np.ndarray) -> np.ndarray:
        return gaussian_filter(image, _SIGMA, truncate=_TRUNCATE, mode="reflect")

    mean_a, mean_b = blur(first), blur(second)
    var_a = blur(first * first) - mean_a**2
    var_b = blur(second * second) - mean_b**2
    covariance = blur(first * second) - mean_a * mean_b
    index = ((2 * mean_a * mean_b + _C1) * (2 * covariance + _C2)
             / ((mean_a**2 + mean_b**2 + _C1) * (var_a + var_b + _C2)))
    return float(index.mean())


def frame_similarity(recorded: np.ndarray, simulated: np.ndarray) -> tuple[float, float]:
    """(mean absolute RGB difference, SSIM) of a recorded frame and ours."""
    if recorded.shape != simulated.shape:
        simulated = np.asarray(Image.fromarray(simulated).resize(
            (recorded.shape[1], recorded.shape[0]), Image.Resampling.BOX))
    difference = np.abs(recorded.astype(np.int16) - simulated.astype(np.int16)).mean()
    return float(difference), ssim(luma(recorded), luma(simulated))


@dataclass(frozen=True)
class TurnSimilarity:
    """One turn of the recording against the replay: its health and how alike the frames are.

    ``mad`` and ``ssim`` are None where either side has no frame (Unity's episode ended in the
    last script; ours may have ended earlier or not at all).
    """

    turn: int
    script: str
    recorded_health: float | None
    health: float | None
    mad: float | None
    ssim: float | None


def compare_turns(recording_dir: Path, replay: Replay) -> list[TurnSimilarity]:
    """Every turn of the recording (0: the start's last picture; 1..N: each script).

    ``replay`` must have been made with frames (``replay_recording(..., render=True)``) at
    the recording's 512 px.
    """
    recording_dir = Path(recording_dir)
    recorded = read_recording(recording_dir)
    turns = [_initial_turn(recording_dir, replay.initial_frames)]
    replayed = {script.index: script for script in replay.scripts}
    for script in recorded:
        ours = replayed.get(script.index)
        mad = index = None
        if ours is not None and ours.frame is not None and script.observation is not None:
            mad, index = frame_similarity(read_recorded_frame(recording_dir, script.observation),
                                          ours.frame)
        turns.append(TurnSimilarity(script.index, script.text, script.health,
                                    ours.health if ours is not None else None, mad, index))
    return turns


def _initial_turn(recording_dir: Path, frames: Sequence[np.ndarray]) -> TurnSimilarity:
    """Turn 0: the last of the three pictures before the first script, as the model saw it."""
    with (recording_dir / "recording.csv").open(newline="") as handle:
        row = next((row for row in csv.DictReader(handle) if row["turn"] == "0"), None)
    if row is None:
        return TurnSimilarity(0, "(initial observations)", None, None, None, None)
    health = float(row["health_after"].rstrip("."))  # the harness printed "99.9."
    names = [name for name in row["observation"].split(";") if name]
    if not names or not frames:
        return TurnSimilarity(0, "(initial observations)", health, None, None, None)
    mad, index = frame_similarity(read_recorded_frame(recording_dir, names[-1]), frames[-1])
    return TurnSimilarity(0, "(initial observations)", health, None, mad, index)


def format_table(turns: Sequence[TurnSimilarity]) -> str:
    """The per-turn table the calibration command prints: one line per turn."""
    lines = [f"{'turn':>4}  {'health Unity':>12}  {'ours':>6}  {'MAD':>5}  {'SSIM':>5}  script"]
    for turn in turns:
        command = turn.script.split(";")[-2].strip() if ";" in turn.script else turn.script
        lines.append(f"{turn.turn:>4}  {_number(turn.recorded_health, 1):>12}  "
                     f"{_number(turn.health, 2):>6}  {_number(turn.mad, 1):>5}  "
                     f"{_number(turn.ssim, 3):>5}  {command[:60]}")
    return "\n".join(lines)


def _number(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"
