"""A backend in the Unity player's position: the ``Backend`` protocol and nothing more.

The embedded simulator steps and draws it, but it offers none of the embedded backend's extras
(``snapshot``, ``restore``, ``look``, ``layout``), as the Unity player cannot: for tests that
what needs those extras says so instead of failing somewhere deeper.
"""

from __future__ import annotations

from llm_aai.env.backends.embedded import EmbeddedBackend

__all__ = ["ProtocolOnly"]


class ProtocolOnly:
    """Reset, step, frame and close of an embedded backend; no copies of the world, no sight."""

    def __init__(self, resolution: int = 64) -> None:
        self.resolution = resolution
        self._inner = EmbeddedBackend(resolution)

    def reset(self, path, seed):
        return self._inner.reset(path, seed)

    def step(self, move, turn, *, render=True):
        return self._inner.step(move, turn, render=render)

    def frame(self):
        return self._inner.frame()

    def close(self):
        self._inner.close()
