"""Frames taken during a reply, joined into one labelled image (``--filmstrip``).

Frames every N steps multiply the images a model is sent (and paid for); a filmstrip keeps it
to two per turn: the strip, then the current view. Each cell is a frame scaled to half size
under a band naming the step it was taken after (the label never covers the picture), left
to right, then top to bottom.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from PIL import Image, ImageDraw

__all__ = ["MAX_COLUMNS", "filmstrip"]

MAX_COLUMNS = 4
"""Cells per row; more frames wrap onto further rows."""
LABEL_HEIGHT = 12
"""Pixels of the band above each frame that holds its label."""


def filmstrip(frames: Sequence[np.ndarray], steps: Sequence[int]) -> np.ndarray:
    """One RGB image of ``frames``, each labelled ``step N`` from ``steps``.

    Raises:
        ValueError: no frames, or not one step label per frame.

    """
    if not frames or len(frames) != len(steps):
        raise ValueError(f"a filmstrip needs one step per frame, got {len(frames)} frames "
                         f"and {len(steps)} steps")
    height, width = np.asarray(frames[0]).shape[:2]
    cell_w, cell_h = max(1, width // 2), max(1, height // 2)
    columns = min(MAX_COLUMNS, len(frames))
    rows = math.ceil(len(frames) / columns)
    row_h = LABEL_HEIGHT + cell_h
    sheet = Image.new("RGB", (columns * cell_w, rows * row_h), (0, 0, 0))
    draw = ImageDraw.Draw(sheet)
    for index, (frame, step) in enumerate(zip(frames, steps, strict=True)):
        cell = Image.fromarray(np.asarray(frame, dtype=np.uint8)[..., :3]).resize(
            (cell_w, cell_h), Image.Resampling.BILINEAR)
        left, top = (index % columns) * cell_w, (index // columns) * row_h
        sheet.paste(cell, (left, top + LABEL_HEIGHT))
        draw.text((left + 2, top), f"{step}" if cell_w < 60 else f"step {step}",
                  fill=(255, 255, 255))
    return np.asarray(sheet)
