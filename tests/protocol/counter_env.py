"""``CounterEnv``: a test double written for the protocol's tests, not a simulator.

It counts steps, records every action it receives, loses 0.06 health per step (the
recording's decay) and ends the episode after a chosen number of steps. It is just enough of
the gymnasium contract to check what the protocol sends and how it adds up what comes back.
"""

from __future__ import annotations

import numpy as np


class CounterEnv:
    def __init__(self, end_after: int | None = None, truncate: bool = False,
                 end_reason: str | None = None) -> None:
        self.end_after = end_after
        self.truncate = truncate
        self.end_reason = end_reason
        self.actions: list[tuple[int, int]] = []
        self.resets: list[tuple] = []
        self.health = 100.0

    def obs(self) -> dict:
        return {
            "image": np.full((4, 4, 3), len(self.actions) % 256, dtype=np.uint8),
            "health": np.array([self.health], dtype=np.float32),
        }

    def reset(self, *, seed=None, options=None) -> tuple[dict, dict]:
        self.resets.append((seed, options))
        self.actions.clear()
        self.health = 100.0
        return self.obs(), {}

    def step(self, action):
        assert isinstance(action, np.ndarray) and action.shape == (2,)
        self.actions.append((int(action[0]), int(action[1])))
        self.health -= 0.06
        ended = self.end_after is not None and len(self.actions) >= self.end_after
        info = {"step": len(self.actions)}
        if ended and self.end_reason:
            info["end_reason"] = self.end_reason
        return self.obs(), -0.0006, ended and not self.truncate, ended and self.truncate, info
