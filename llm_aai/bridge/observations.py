"""The Animal-AI agent's observations in the form ``mlagents_envs`` decodes them.

In sensor-name order (the C# agent sorts its sensors by name, and ``animalai`` relies on it):

1. ``CameraSensor`` when the camera is on: shape ``[C, R, R]`` or ``[R, R, C]`` by the
   client's dialect (C = 3, or 1 for grayscale). A PNG is always RGB: the Unity player
   encodes its RGB texture whatever the channel count, and ``mlagents_envs`` averages the
   channels of a one-channel observation (a one-channel "L" PNG even breaks its decoder).
2. ``RayPerceptionSensor`` when rays are on: per ray (centre first, then right and left
   alternately), one flag per tag (``llm_aai.sim.raycast.RAY_TAGS``, 18 as ``animalai``
   6.2.0 expects), a "hit nothing" flag and the hit distance as a fraction of the ray.
3. ``VectorSensor_size7``: health, the agent's velocity in its own frame, its world position.

How the camera travels: ``mlagents_envs`` accepts a PNG (``compression_type=PNG``, what the
Unity player sends) or the floats themselves (``NONE``: ``float_data`` reshaped to the
declared shape, in [0, 1]). Both give the client the same float32 values, ``uint8 / 255``.
Small RGB frames go as floats to clients that read them cheaply
(``llm_aai.bridge.dialects``, animalai 6.x): encoding and decoding a PNG cost the two
processes about 1 ms a step at 84 px, a third of the bridge's own work, while the floats
are copied in microseconds (85 KB a message at 84 px). Frames of more than
``RAW_MAX_VALUES`` values stay PNG (zlib level 1: 9 ms for a 512 px frame against 34 ms at
the default level 6), far below the client's 4 MiB message limit; so do grayscale ones,
whose single channel the client itself averages from an RGB PNG (sending the average would
depend on numpy's summation order).
"""

from __future__ import annotations

import io
from collections.abc import Sequence

import numpy as np
from PIL import Image

from llm_aai.sim.raycast import RAY_TAGS, RayHit

PNG_LEVEL = 1
RAW_MAX_VALUES = 128 * 128 * 3
"""Largest RGB frame sent as floats (192 KB of them); larger ones go as PNG."""


def camera_frame(image: np.ndarray, resolution: int) -> np.ndarray:
    """The ``(R, R, 3)`` uint8 observation for a drawn ``(S, S, 3)`` frame.

    Frames are drawn at 64 px or more (the renderer's floor); a smaller observation is the
    area average of the drawn one, as a camera with fewer, larger pixels would see it.
    """
    if image.shape[:2] == (resolution, resolution):
        return image
    picture = Image.fromarray(image, "RGB").resize((resolution, resolution),
                                                  Image.Resampling.BOX)
    return np.asarray(picture)


def camera_png(frame: np.ndarray) -> bytes:
    """An ``(R, R, 3)`` uint8 frame as an RGB PNG."""
    buffer = io.BytesIO()
    Image.fromarray(frame, "RGB").save(buffer, format="PNG", compress_level=PNG_LEVEL)
    return buffer.getvalue()


def small_rgb(frame: np.ndarray, channels: int) -> bool:
    """Whether the camera observation may go uncompressed (the dialect decides too).

    Only RGB frames of at most ``RAW_MAX_VALUES`` values: see the module's docstring.
    """
    return channels == 3 and frame.size <= RAW_MAX_VALUES


def float_data_field(frame: np.ndarray, *, channels_last: bool) -> bytes:
    """``ObservationProto.float_data`` (field 4) for ``frame``, serialized, ready to merge.

    The values are ``frame / 255`` as float32, in the declared layout (``[H, W, C]`` or
    ``[C, H, W]``). Writing the packed field directly is what makes floats cheap: filling the
    repeated field from Python costs 7 ms at 84 px.
    """
    values = frame.astype(np.float32) / 255.0
    if not channels_last:
        values = np.moveaxis(values, -1, 0)
    packed = np.ascontiguousarray(values, dtype="<f4").tobytes()
    inner = _FLOAT_DATA_VALUES + _varint(len(packed)) + packed
    return _FLOAT_DATA + _varint(len(inner)) + inner


_FLOAT_DATA = bytes([4 << 3 | 2])
"""Tag of ``ObservationProto.float_data`` (field 4, length-delimited)."""
_FLOAT_DATA_VALUES = bytes([1 << 3 | 2])
"""Tag of ``FloatData.data`` (field 1, packed floats)."""


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


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
