"""Side-by-side sheet of the Unity recording and the simulator's replay, one row per script.

Made by ``python -m llm_aai.calibration --out sheet.png`` (``llm_aai.cli.contact_sheet``).
Each row shows the recorded frame (left) and the simulated frame (right) after one script,
labelled with the script and both health values, so a person can judge at a glance whether
the simulator looks and moves like Animal-AI.
"""

from __future__ import annotations

import os
from pathlib import Path

from PIL import Image, ImageDraw

from llm_aai.calibration.fidelity import Replay, read_recorded_frame, replay_recording

_LABEL_HEIGHT = 18


def default_recording_dir() -> Path:
    """The shared recording: ``$LLM_AAI_SHARED`` or ``../shared`` next to the repository."""
    shared = os.environ.get("LLM_AAI_SHARED")
    base = Path(shared) if shared else Path(__file__).resolve().parents[3] / "shared"
    return base / "fixtures" / "unity-tutorial-recording"


def build_sheet(recording_dir: Path, tile: int = 256,
                columns: int = 3) -> tuple[Image.Image, Replay]:
    """Replay the recording with rendering on; return the sheet as a PIL image, and the replay."""
    replay = replay_recording(recording_dir, render=True, resolution=512)
    cells = []
    for script in replay.scripts:
        if script.frame is None or script.recorded_frame is None:
            continue
        recorded = Image.fromarray(read_recorded_frame(recording_dir, script.recorded_frame))
        pair = Image.new("RGB", (2 * tile, tile + _LABEL_HEIGHT), "white")
        pair.paste(recorded.resize((tile, tile)), (0, _LABEL_HEIGHT))
        pair.paste(Image.fromarray(script.frame).resize((tile, tile)), (tile, _LABEL_HEIGHT))
        command = script.text.split(";")[-2].strip() if ";" in script.text else script.text
        label = (f"#{script.index} {command}  health rec {script.recorded_health} "
                 f"sim {script.health:.2f}")
        ImageDraw.Draw(pair).text((4, 3), label, fill="black")
        cells.append(pair)
    rows = (len(cells) + columns - 1) // columns
    cell_w, cell_h = 2 * tile + 8, tile + _LABEL_HEIGHT + 8
    sheet = Image.new("RGB", (columns * cell_w, max(rows, 1) * cell_h), (90, 90, 90))
    for k, cell in enumerate(cells):
        sheet.paste(cell, ((k % columns) * cell_w, (k // columns) * cell_h))
    return sheet, replay
