"""``HeadlessEnv``: the embedded simulator in the gymnasium shape the protocol steps, nothing drawn.

The players that need only the physics (the oracle's own episodes in the audit and the
variants' validation, the replay of the Unity recording) drive ``llm_aai.protocol.Episode``
on this env rather than on ``AnimalAIEnv``: it builds no renderer (the simulator's OpenGL
context is never made), reads no arena file and takes the world as given, so an episode costs
its physics alone. Its reset loads a world the caller holds:

* an already placed arena (``PlacedArena``): loaded with ``default_rng(seed)`` (what the
  oracle's search was always seeded with; the caller placed it in the world it wants, e.g.
  the one a ``run`` episode with that seed sees);
* an ``Arena`` not yet placed: placed with ``default_rng(seed)`` and loaded with the same
  generator, as the embedded backend does (how the recording's replay is seeded).

``render=True`` makes a simulator that can draw, and frames are drawn only where the
protocol looks (the observation after each ``play``), for the recording's frame checks.
Everything else about the episode (no-ops, caps, the run-out) is the protocol's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from llm_aai.arena.model import Arena
from llm_aai.arena.placement import PlacedArena, place_arena
from llm_aai.sim import Simulator
from llm_aai.sim.simulator import PHYSICS_BUILDS

__all__ = ["HeadlessEnv"]


class HeadlessEnv:
    """The bare ``Simulator`` behind ``reset``/``step``/``play`` (see the module doc).

    Args:
        world: what ``reset`` loads, unless its ``options={"world": ...}`` names another.
        physics_build: the Animal-AI build whose physics the simulator follows.
        render: draw the frame after each ``play`` (else ``observation["image"]`` is None).
        resolution: side of a drawn frame, in pixels.

    """

    def __init__(self, world: Arena | PlacedArena | None = None, *,
                 physics_build: str = PHYSICS_BUILDS[0], render: bool = False,
                 resolution: int = 512) -> None:
        self.world = world
        self.render = render
        self.simulator = Simulator(resolution, render=render, physics_build=physics_build)

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        """Load the world (``options["world"]`` or the env's) seeded with ``default_rng(seed)``.

        Raises:
            ValueError: there is no world to load.
            PlacementError: an ``Arena`` whose agent finds no free spot.

        """
        world = (options or {}).get("world", self.world)
        if world is None:
            raise ValueError("HeadlessEnv.reset: no world to load; give one to the env or as "
                             "options={'world': ...}")
        rng = np.random.default_rng(seed)
        placed = world if isinstance(world, PlacedArena) else place_arena(world, rng)
        self.simulator.load(placed, rng)
        return self.observe(), {}

    def step(self, action: Sequence[int]):
        """One AAI step, ``action = (move, turn)``; gymnasium's 5-tuple."""
        observation, reward, terminated, truncated, infos = self.play([action])
        return observation, reward, terminated, truncated, infos[-1]

    def play(self, actions: Sequence[Sequence[int]], *, observe: bool = True):
        """Step until the actions or the episode end; observe after the last step only.

        Returns:
            ``(observation, reward, terminated, truncated, infos)``: the observation is None
            when ``observe`` is False and the episode has not ended; ``infos`` holds each
            step's ``events``, ``end_reason`` and ``health``.

        """
        reward, infos = 0.0, []
        sim = self.simulator
        for move, turn in actions:
            result = sim.step(int(move), int(turn))
            reward += result.reward
            infos.append({"events": result.events, "end_reason": result.end_reason,
                          "health": result.health})
            if result.done:
                break
        observation = self.observe() if observe or sim.done else None
        return observation, reward, sim.done, False, infos

    def observe(self) -> dict[str, Any]:
        """Health, and the frame when rendering (else None)."""
        image = self.simulator.observe() if self.render else None
        return {"image": image, "health": self.simulator.health}

    def close(self) -> None:
        """Release the simulator (and its renderer, if it made one)."""
        self.simulator.close()
