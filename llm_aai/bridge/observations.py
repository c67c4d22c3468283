"""The Animal-AI agent's observations in the form ``mlagents_envs`` decodes them.

In sensor-name order (the C# agent sorts its sensors by name, and ``animalai`` relies on it):

1. ``CameraSensor`` when the camera is on: a PNG of shape ``[C, R, R]`` (C = 3, or 1 for
   grayscale). The file is always RGB: the Unity player encodes its RGB texture whatever the
   channel count, and ``mlagents_envs`` averages the channels of a one-channel observation
   (a one-channel "L" PNG even breaks its decoder).
2. ``RayPerceptionSensor`` when rays are on: per ray (centre first, then right and left
   alternately), one flag per tag (``llm_aai.sim.raycast.RAY_TAGS``, 18 as ``animalai``
   6.2.0 expects), a "hit nothing" flag and the hit distance as a fraction of the ray.
3. ``VectorSensor_size7``: health, the agent's velocity in its own frame, its world position.

PNG speed: zlib level 1 (9 ms for a 512 px frame against 34 ms at the default level 6);
the files are a little larger, which the 4 MiB message limit easily allows.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

import numpy as np
from PIL import Image

from llm_aai.sim.raycast import RAY_TAGS, RayHit

PNG_LEVEL = 1


def camera_png(image: np.ndarray, resolution: int) -> bytes:
    """Encode an ``(S, S, 3)`` uint8 frame as an RGB PNG of ``resolution`` pixels a side.

    Frames are drawn at 64 px or more (the renderer's floor); a smaller observation is the
    area average of the drawn one, as a camera with fewer, larger pixels would see it.
    """
    picture = Image.fromarray(image, "RGB")
    if picture.size != (resolution, resolution):
        picture = picture.resize((resolution, resolution), Image.Resampling.BOX)
    buffer = io.BytesIO()
    picture.save(buffer, format="PNG", compress_level=PNG_LEVEL)
    return buffer.getvalue()


def rays_vector(hits: Sequence[RayHit]) -> list[float]:
    """The ray sensor's floats for hits in sensor order: ``(T + 2)`` per ray."""
    width = len(RAY_TAGS) + 2
    values = [0.0] * (width * len(hits))
    for index, hit in enumerate(hits):
        base = index * width
        if hit.tag is None:
            values[base + len(RAY_TAGS)] = 1.0
        else:
            values[base + hit.tag] = 1.0
        values[base + len(RAY_TAGS) + 1] = float(hit.fraction)
    return values


def rays_length(rays_per_side: int) -> int:
    """How many floats the ray observation has."""
    return (len(RAY_TAGS) + 2) * (2 * rays_per_side + 1)


def vector(health: float, local_velocity: Sequence[float], position: Sequence[float]) -> list:
    """AAI's 7-float vector: health, local velocity (x right, y up, z forward), position."""
    return [float(health), *map(float, local_velocity), *map(float, position)]
