"""The small protocol every simulator backend follows, so the gymnasium env never knows which.

A backend plays one arena file at a time with AAI's two discrete action branches and reports
what the agent sees and how it is doing. Two implement it: ``embedded`` (our MuJoCo
re-implementation, the default) and ``unity`` (the real Animal-AI player through ``animalai``).

``info`` keys every backend provides (for analysis only; the agent must not see them):

* ``position``: the agent's world position (x, y, z), Unity coordinates (y up).
* ``velocity``: its velocity in its own frame (x right, y up, z forward), m/s, as in AAI's
  7-float vector observation.

A backend may set ``simulates_in_process = True`` when its world runs on this process's
CPU; the suite then lets episodes set up one at a time (see ``Suite._setup_gate``).

Backends may add more: the embedded one adds ``events``, ``end_reason``, ``yaw`` and
``world_velocity``; the unity one adds ``interrupted`` on the last step.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

HEALTH_MAX = 100.0


@dataclass(frozen=True)
class BackendStep:
    """What the agent perceives after a reset or a step, plus analysis-only info.

    Attributes:
        image: first-person view, ``(H, W, 3)`` uint8; None for a step taken with
            ``render=False`` that did not end the episode.
        health: 0-100.
        reward: reward of this step (0 after a reset).
        done: whether the episode has ended (goal, death, health out, time out).
        info: see the module docstring.

    """

    image: np.ndarray | None
    health: float
    reward: float
    done: bool
    info: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Backend(Protocol):
    """A simulator that plays AAI arena files.

    Attributes:
        resolution: side of the square first-person image, in pixels.

    """

    resolution: int

    def reset(self, arena_path: Path, seed: int) -> BackendStep:
        """Start an episode in ``arena_path``'s first arena (``ArenaConfig.first_id``)."""
        ...

    def step(self, move: int, turn: int, *, render: bool = True) -> BackendStep:
        """Advance one AAI step: ``move`` 0 none/1 forward/2 back, ``turn`` 0/1 right/2 left.

        ``render=False`` lets a backend skip drawing a frame nobody will look at (the image is
        then None); it must still render when the step ends the episode. Rendering never
        changes the simulation, so the trajectory is the same either way.
        """
        ...

    def frame(self) -> np.ndarray:
        """The first-person view of the current state (after a step taken with no render)."""
        ...

    def close(self) -> None:
        """Release processes, sockets and GPU contexts; the backend is unusable afterwards."""
        ...


def check_action(move: int, turn: int) -> tuple[int, int]:
    """Validate an action against AAI's 3 x 3 branches.

    Raises:
        ValueError: a branch value outside {0, 1, 2}.

    """
    move_i, turn_i = int(move), int(turn)
    if move_i not in (0, 1, 2) or turn_i not in (0, 1, 2) or (move_i, turn_i) != (move, turn):
        raise ValueError(f"actions are 0, 1 or 2 per branch; got move={move!r}, turn={turn!r}")
    return move_i, turn_i
