"""The default backend: our MuJoCo re-implementation of Animal-AI, in this process.

``EmbeddedBackend`` adapts ``llm_aai.sim.Simulator`` to the ``Backend`` protocol: it reads the
arena file (cached per path, so switching back and forth between arenas parses each once),
resolves its random values with ``llm_aai.arena.place_arena`` from a generator seeded with
the reset's seed, and loads the result. The simulator keeps its OpenGL context across
arenas, so a reset costs one scene build, not a new renderer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from llm_aai.arena import place_arena
from llm_aai.arena.yaml_io import load_config
from llm_aai.env.backends.base import BackendStep, check_action
from llm_aai.sim import Simulator


class EmbeddedBackend:
    """The MuJoCo simulator behind the ``Backend`` protocol.

    Args:
        resolution: side of the square first-person image (64-1024 px).
        physics_build: the Animal-AI build whose physics the simulator follows (``"3.x"``, the
            default, or ``"2019"``; ``llm_aai.sim.simulator.PHYSICS_BUILDS``).

    """

    simulates_in_process = True
    """The world is simulated and drawn by this process's CPU (the suite's schedule uses it)."""

    def __init__(self, resolution: int = 512, *, physics_build: str = "3.x") -> None:
        self.resolution = int(resolution)
        self._sim = Simulator(self.resolution, render=True, physics_build=physics_build)
        self._configs: dict[tuple[Path, int], Any] = {}
        self._loaded = False

    def reset(self, arena_path: Path, seed: int) -> BackendStep:
        """Place and load the arena ``arena_path`` plays first, with randomness from ``seed``.

        Raises:
            ArenaError: the file is not a valid arena configuration.
            PlacementError: the agent found no free spot.

        """
        path = Path(arena_path).resolve()
        config = self._config(path)
        arena = config.arena()
        rng = np.random.default_rng(seed)
        placed = place_arena(arena, rng, source=str(path))
        self._sim.load(placed, rng)
        self._loaded = True
        info = self._info(())
        info["dropped"] = placed.dropped
        return BackendStep(self._sim.observe(), self._sim.health, 0.0, False, info)

    def step(self, move: int, turn: int, *, render: bool = True) -> BackendStep:
        """Advance the simulator one AAI step (3 physics steps); render only if asked."""
        move, turn = check_action(move, turn)
        if not self._loaded:
            raise RuntimeError("no episode running: call reset() first")
        result = self._sim.step(move, turn)
        info = self._info(result.events)
        info["end_reason"] = result.end_reason
        image = self._sim.observe() if render or result.done else None
        return BackendStep(image, result.health, result.reward, result.done, info)

    def frame(self) -> np.ndarray:
        """Draw the current first-person view (black during a blackout)."""
        if not self._loaded:
            raise RuntimeError("no episode running: call reset() first")
        return self._sim.observe()

    def snapshot(self) -> Any:
        """An exact copy of the episode now (``Simulator.snapshot``), for ``restore``."""
        if not self._loaded:
            raise RuntimeError("no episode running: call reset() first")
        return self._sim.snapshot()

    def restore(self, snapshot: Any) -> None:
        """Put the episode back to ``snapshot`` exactly: same states, rewards and frames."""
        if not self._loaded:
            raise RuntimeError("no episode running: call reset() first")
        self._sim.restore(snapshot)

    @property
    def simulator(self) -> Any:
        """The simulator itself, for analysis that needs more than the agent perceives."""
        return self._sim

    def look(self) -> tuple[Any, list[Any], bool]:
        """What the agent's eye sees now (``llm_aai.sim.sight``): eye, sightings, darkness."""
        if not self._loaded:
            raise RuntimeError("no episode running: call reset() first")
        eye, sightings = self._sim.look()
        return eye, sightings, self._sim.dark

    def layout(self) -> tuple[Any, tuple[Any, ...], list[tuple[float, float, float]]]:
        """The whole arena now (``Simulator.layout``): eye, placed objects, their centres."""
        if not self._loaded:
            raise RuntimeError("no episode running: call reset() first")
        return self._sim.layout()

    def render_overview(self, size: int = 512) -> np.ndarray:
        """Render a top-down image of the arena, ``(size, size, 3)`` uint8."""
        return self._sim.render_overview(size)

    def close(self) -> None:
        """Release the simulator's OpenGL context."""
        self._sim.close()
        self._loaded = False

    def _config(self, path: Path) -> Any:
        key = (path, path.stat().st_mtime_ns)
        if key not in self._configs:
            self._configs[key] = load_config(path)
        return self._configs[key]

    def _info(self, events: tuple) -> dict[str, Any]:
        state = self._sim.state
        return {
            "position": state.position,
            "velocity": state.local_velocity,
            "world_velocity": state.velocity,
            "yaw": state.yaw,
            "events": tuple(events),
        }
