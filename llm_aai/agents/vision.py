"""Colour segmentation and camera geometry for the heuristic baseline.

AAI paints objects with fixed colours: yellow and green balls are food, red balls and
dark-red floor patches are deadly, orange patches drain health. The thresholds below are
in HSV and were calibrated on the real Unity recording (shared fixtures): yellow ball
(247,220,103), green ball (189,225,138), red ball (207,89,89), death zone (132,66,56),
against the sandy floor (216,183,132) whose hue is close to yellow's but whose
saturation is much lower, and magenta walls whose hue is far from all of them.

Geometry: the camera sits 0.5 m above the floor with a 100 degree field of view, so at a
512-pixel height the focal length is 256 / tan(50 deg) = 214.8 px. A pixel column maps
to a bearing, and the row where an object meets the floor maps to a distance.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = [
    "CAMERA_HEIGHT_M",
    "FIELD_OF_VIEW_DEG",
    "Blob",
    "Camera",
    "classify",
    "classify_hsv",
    "find_blobs",
    "floor_mask",
    "go_steps_for_distance",
    "hsv",
]

FIELD_OF_VIEW_DEG = 100.0
CAMERA_HEIGHT_M = 0.5

CLASSES = ("yellow", "green", "red", "orange")

# Distance covered by Go(n) from rest, thrust plus the slide after it (metres), from the
# AAI speed model that matches the recording to about 0.1 m (docs/animal-ai-facts.md §1).
_GO_TABLE = ((1, 0.26), (2, 0.74), (3, 1.35), (5, 2.84), (9, 6.73), (10, 7.82),
             (15, 13.97), (20, 20.88), (30, 35.78), (35, 43.46))


def hsv(image: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Hue in degrees [0, 360), saturation and value in [0, 1], per pixel."""
    rgb = np.asarray(image, dtype=np.float32)[..., :3] / 255.0
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    # channel by channel, not rgb.max(axis=-1): the same numbers, but numpy's reduction over
    # a last axis of 3 is about 20 times slower, and this runs on every frame the agent sees
    high = np.maximum(np.maximum(r, g), b)
    chroma = high - np.minimum(np.minimum(r, g), b)
    safe = np.where(chroma > 0, chroma, 1.0)
    hue = np.select(
        [high == r, high == g],
        [((g - b) / safe) % 6.0, (b - r) / safe + 2.0],
        (r - g) / safe + 4.0,
    ) * 60.0
    hue = np.where(chroma > 0, hue, 0.0)
    saturation = np.where(high > 0, chroma / np.where(high > 0, high, 1.0), 0.0)
    return hue, saturation, high


def classify(image: np.ndarray) -> dict[str, np.ndarray]:
    """Boolean masks for each colour class in :data:`CLASSES`."""
    return classify_hsv(*hsv(image))


def classify_hsv(hue: np.ndarray, sat: np.ndarray, val: np.ndarray) -> dict[str, np.ndarray]:
    """:func:`classify` on precomputed HSV channels."""
    return {
        "yellow": (hue >= 40) & (hue <= 60) & (sat >= 0.45) & (val >= 0.8),
        "green": (hue >= 70) & (hue <= 150) & (sat >= 0.25) & (val >= 0.7),
        "red": ((hue <= 15) | (hue >= 345)) & (sat >= 0.4) & (val >= 0.3),
        "orange": (hue > 15) & (hue < 32) & (sat >= 0.6) & (val >= 0.5),
    }


def floor_mask(hue: np.ndarray, sat: np.ndarray, val: np.ndarray) -> np.ndarray:
    """Sandy or shaded stone floor: warm hue, low-to-mid saturation."""
    return (hue >= 20) & (hue <= 75) & (sat >= 0.08) & (sat <= 0.5) & (val >= 0.25)


@dataclass(frozen=True)
class Blob:
    """A connected patch of one colour class (coordinates in full-image pixels)."""

    kind: str
    area: int
    left: int
    right: int
    top: int
    bottom: int

    @property
    def center_col(self) -> float:
        """Horizontal middle of the blob."""
        return (self.left + self.right) / 2.0

    @property
    def width(self) -> int:
        """Width in pixels."""
        return self.right - self.left + 1

    @property
    def height(self) -> int:
        """Height in pixels."""
        return self.bottom - self.top + 1

    @property
    def roundness(self) -> float:
        """Short side over long side of the bounding box (1 for a disc)."""
        return min(self.width, self.height) / max(self.width, self.height)

    @property
    def fill(self) -> float:
        """Share of the bounding box covered (pi/4 for a disc)."""
        return self.area / (self.width * self.height)


def find_blobs(mask: np.ndarray, kind: str, *, stride: int = 2, min_area: int = 12,
               min_roundness: float = 0.0, min_fill: float = 0.0) -> list[Blob]:
    """Find the connected components (4-neighbour) of ``mask``, largest first.

    The mask is subsampled by ``stride`` first: balls are at least a few pixels wide at
    any useful distance, and it keeps this pure-numpy labelling fast. ``min_roundness``
    and ``min_fill`` reject thin streaks (floor grout, image borders) that share a
    ball's colour; a ball half hidden behind a wall still passes 0.5 and 0.45.
    """
    small = np.ascontiguousarray(mask[::stride, ::stride])
    labels = np.zeros(small.shape, dtype=np.int32)
    blobs: list[Blob] = []
    rows, cols = small.shape
    for start in zip(*np.nonzero(small), strict=True):
        if labels[start]:
            continue
        label = len(blobs) + 1
        labels[start] = label
        stack = [start]
        ys: list[int] = []
        xs: list[int] = []
        while stack:
            y, x = stack.pop()
            ys.append(y)
            xs.append(x)
            for ny, nx in ((y - 1, x), (y + 1, x), (y, x - 1), (y, x + 1)):
                if 0 <= ny < rows and 0 <= nx < cols and small[ny, nx] and not labels[ny, nx]:
                    labels[ny, nx] = label
                    stack.append((ny, nx))
        area = len(ys) * stride * stride
        blob = Blob(kind, area, int(min(xs)) * stride, int(max(xs)) * stride + stride - 1,
                    int(min(ys)) * stride, int(max(ys)) * stride + stride - 1)
        blobs.append(blob)
    kept = (b for b in blobs
            if b.area >= min_area and b.roundness >= min_roundness and b.fill >= min_fill)
    return sorted(kept, key=lambda b: -b.area)


@dataclass(frozen=True)
class Camera:
    """Pinhole model of the agent's camera for an image of a given size."""

    height: int
    width: int
    fov_deg: float = FIELD_OF_VIEW_DEG
    eye_m: float = CAMERA_HEIGHT_M

    @property
    def focal(self) -> float:
        """Focal length in pixels (square pixels; the vertical FOV sets it)."""
        return (self.height / 2.0) / math.tan(math.radians(self.fov_deg / 2.0))

    def bearing(self, col: float) -> float:
        """Degrees right (+) or left (-) of straight ahead for a pixel column."""
        return math.degrees(math.atan((col - self.width / 2.0) / self.focal))

    def floor_distance(self, row: float) -> float | None:
        """Forward distance (m) to where the floor meets ``row``; None at/above horizon."""
        below = row + 0.5 - self.height / 2.0
        return self.eye_m * self.focal / below if below > 0.5 else None

    def row_of_distance(self, distance: float) -> float:
        """Image row where the floor is ``distance`` metres ahead."""
        return self.height / 2.0 + self.eye_m * self.focal / max(distance, 1e-6)


def go_steps_for_distance(distance: float, max_steps: int = 35) -> int:
    """Fewest Go steps that cover ``distance`` metres (inverse of the speed table)."""
    if distance <= 0:
        return 0
    for steps, covered in _GO_TABLE:
        if covered >= distance:
            previous = [s for s, c in _GO_TABLE if s < steps]
            lower = max(previous) if previous else 0
            low_cover = dict(_GO_TABLE).get(lower, 0.0)
            fraction = (distance - low_cover) / (covered - low_cover)
            return min(max_steps, max(1, math.ceil(lower + fraction * (steps - lower))))
    return max_steps
