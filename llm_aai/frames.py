"""Observation frames as image files: the bytes the model is sent are the bytes the log keeps.

JPEG at quality 75 is the default. The frames of the Unity recording we calibrate against,
written by the paper's harness, are JPEGs at exactly that quality (their quantisation tables
are Pillow's for 75), so this is what models were shown in the paper. It is also what keeps
the harness light: a 512 px frame encodes in about 1 ms as JPEG against about 10 ms as PNG,
and a 30-turn conversation stays a few hundred kilobytes. PNG keeps every rendered pixel, for
studies that want lossless input.
"""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

__all__ = ["DEFAULT_FRAME_FORMAT", "FRAME_KINDS", "FrameFormat", "data_url", "file_data_url",
           "read_frame"]

FRAME_KINDS = ("jpeg", "png")
_SUFFIX = {"jpeg": ".jpg", "png": ".png"}
_MAGIC = ((b"\x89PNG\r\n\x1a\n", "image/png"), (b"\xff\xd8\xff", "image/jpeg"))


@dataclass(frozen=True)
class FrameFormat:
    """How frames are encoded.

    Attributes:
        kind: ``jpeg`` or ``png``.
        quality: JPEG quality, 1-95 (Pillow's scale; ignored for PNG).
    """

    kind: str = "jpeg"
    quality: int = 75

    def __post_init__(self) -> None:
        if self.kind not in FRAME_KINDS:
            raise ValueError(f"frame format must be one of {', '.join(FRAME_KINDS)}, "
                             f"got {self.kind!r}")
        if not 1 <= int(self.quality) <= 95:
            raise ValueError(f"JPEG quality must be in 1..95, got {self.quality}")

    @property
    def suffix(self) -> str:
        """File name suffix: ``.jpg`` or ``.png``."""
        return _SUFFIX[self.kind]

    def encode(self, image: np.ndarray) -> bytes:
        """The file bytes of an RGB ``(H, W, 3)`` uint8 frame."""
        buffer = io.BytesIO()
        picture = Image.fromarray(np.asarray(image, dtype=np.uint8))
        if self.kind == "jpeg":
            picture.save(buffer, format="JPEG", quality=int(self.quality))
        else:
            picture.save(buffer, format="PNG", compress_level=1)
        return buffer.getvalue()

    def as_stored(self, image: np.ndarray) -> np.ndarray:
        """The pixels a reader of the stored file gets back (``image`` itself for PNG)."""
        if self.kind == "png":
            return np.asarray(image)
        with Image.open(io.BytesIO(self.encode(image))) as handle:
            return np.asarray(handle.convert("RGB"))


DEFAULT_FRAME_FORMAT = FrameFormat()


def read_frame(path: str | Path) -> np.ndarray:
    """Decode a frame file (any format Pillow reads) to RGB ``(H, W, 3)`` uint8."""
    with Image.open(path) as handle:
        return np.asarray(handle.convert("RGB"))


def data_url(data: bytes, source: object = "data") -> str:
    """PNG or JPEG bytes as a base64 data URL, the type read from the bytes themselves.

    Raises:
        ValueError: the bytes (from ``source``, named in the message) are neither.
    """
    for magic, mime in _MAGIC:
        if data.startswith(magic):
            return f"data:{mime};base64," + base64.b64encode(data).decode("ascii")
    raise ValueError(f"{source} is neither a PNG nor a JPEG file")


def file_data_url(path: str | Path) -> str:
    """A saved PNG or JPEG frame as a base64 data URL, without decoding it.

    Raises:
        ValueError: the file is neither PNG nor JPEG.
    """
    return data_url(Path(path).read_bytes(), path)
