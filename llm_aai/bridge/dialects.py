"""What differs between the ``animalai`` client generations, chosen from the handshake.

Python answers the player's first message with its own versions
(``rl_initialization_input``): ``communication_version`` (``"1.5.0"`` for every client
generation we serve) and ``package_version``, the ``mlagents_envs`` release it runs. The
one thing the bridge must say differently is the camera layout, and the package version is
what tells it:

* ``mlagents_envs`` 0.x (ML-Agents release 20 and earlier; ``animalai`` 3.0.x and 4.x, the
  LLM-AAI paper's harness): images are channels-last. The client decodes a PNG to
  ``(H, W, C)`` and checks it against the observation's shape, so the player declares
  ``[H, W, C]`` with dimension properties ``[translational, translational, none]``.
* ``mlagents_envs`` 1.x (``mlagents-envs-aai``, ``animalai`` 6.x): channels-first,
  ``[C, H, W]`` with ``[none, translational, translational]``.

Everything else these clients check is the same in both (communication version 1.5.0, the
seven capabilities, PNG decoding with an optional channel mapping, the 7-float vector and
the ray layout, whose tag count both parsers read from the vector's length). What differs
in cost is reading uncompressed camera floats (``floats_cheap``), so a small frame goes as
floats to 1.x clients and as a PNG to 0.x ones.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

NONE, TRANSLATIONAL = 1, 2
"""ML-Agents ``DimensionProperty`` flags."""


@dataclass(frozen=True)
class ClientDialect:
    """How one client generation expects its observations declared.

    Attributes:
        name: the generation in words, for the player's log.
        channels_last: camera shape ``[H, W, C]`` instead of ``[C, H, W]``.
        floats_cheap: the client decodes an uncompressed camera (``float_data``) faster than a
            PNG. True for 1.x, which needs protobuf >= 6 (upb: a packed field is one copy);
            False for 0.x, which pins protobuf 3.20.3, pure Python on Python 3.11 (49 ms to
            read an 84 px frame's floats, against under 1 ms for its PNG).

    """

    name: str
    channels_last: bool
    floats_cheap: bool

    def camera_shape(self, channels: int, size: int) -> list[int]:
        """The camera observation's declared shape."""
        return [size, size, channels] if self.channels_last else [channels, size, size]

    def camera_dimension_properties(self) -> list[int]:
        """The camera observation's dimension properties, in the shape's order."""
        if self.channels_last:
            return [TRANSLATIONAL, TRANSLATIONAL, NONE]
        return [NONE, TRANSLATIONAL, TRANSLATIONAL]


CHANNELS_LAST = ClientDialect("mlagents_envs 0.x (animalai 3.x/4.x): channels-last images",
                              channels_last=True, floats_cheap=False)
CHANNELS_FIRST = ClientDialect("mlagents_envs 1.x (animalai 6.x): channels-first images",
                               channels_last=False, floats_cheap=True)

DIALECT_BY_MAJOR = {0: CHANNELS_LAST, 1: CHANNELS_FIRST}
"""``mlagents_envs`` major version -> dialect; a newer major speaks the newest one known."""


def dialect_for(package_version: str) -> tuple[ClientDialect, str | None]:
    """The dialect of a client that reported ``package_version`` in the handshake.

    Returns:
        The dialect, and a warning for the player's log when the version is not one we know
        (unparseable or a newer major: then the newest dialect is used, and the log says so).

    """
    match = re.match(r"\s*v?(\d+)\.", package_version)
    if match is None:
        newest = DIALECT_BY_MAJOR[max(DIALECT_BY_MAJOR)]
        return newest, (f"warning: the client's mlagents_envs version {package_version!r} is "
                        f"not a version number; serving it as {newest.name}")
    major = int(match.group(1))
    if major in DIALECT_BY_MAJOR:
        return DIALECT_BY_MAJOR[major], None
    newest = DIALECT_BY_MAJOR[max(DIALECT_BY_MAJOR)]
    return newest, (f"warning: mlagents_envs {package_version} is newer than the bridge knows; "
                    f"serving it as {newest.name}")
