"""Episodes as the Animal-AI player runs them: arena order, seeds, resets and episode ends.

What the real player (4.3+) does and this module copies:

* The seed of the handshake seeds one generator for the player's life; every arena build
  draws from it, so two players launched with one seed build the same worlds in turn. An
  arena's nonzero ``randomSeed`` reseeds the generator *after* that arena is built, as
  Unity's ``Random.InitState`` call sits after the build.
* The first episode plays the first arena (id 0 when there is one). Every later episode
  start, on a reset *and* after an episode ends, moves to the next id, wrapping around; with
  ``randomizeArenas`` it draws one at random among those not played in this round, where
  the arena that ended a round counts as played in the next (none repeats back to back).
  A new configuration does not restart the count: the next episode plays the arena after
  the current id in the new file (the first one when there is none).
* An episode ends when health runs out or a goal completes the arena; the agent then reports
  a terminal row, and the next episode's first decision follows in the same message.
* Without any configuration the player builds an arena of its own; here it is an empty arena
  with the agent at a random spot (the Unity player fills it with random objects).

Not supported: ``mergeNextArena`` (each arena plays as its own episode; the log says so)
and several agents (refused when the configuration arrives).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from llm_aai.arena.model import Arena, ArenaConfig
from llm_aai.arena.placement import place_arena
from llm_aai.bridge import observations
from llm_aai.bridge.options import PlayerOptions, clamp_resolution
from llm_aai.sim import Simulator
from llm_aai.sim.raycast import ray_angles

RENDER_MIN = 64
"""Smallest frame the renderer draws; smaller observations are averaged down from it."""


@dataclass(frozen=True)
class AgentRow:
    """One agent's report to Python: one ``AgentInfoProto``.

    Attributes:
        reward: reward since the previous decision.
        done: the episode ended with this row.
        camera: the camera observation, ``(R, R, 3)`` uint8, or None without camera.
        rays: the ray floats, or None without rays.
        vector: the 7-float vector.

    """

    reward: float
    done: bool
    camera: np.ndarray | None
    rays: list[float] | None
    vector: list[float]


class ArenaOrder:
    """Which arena of the configuration the next episode plays."""

    def __init__(self) -> None:
        self.current: int | None = None
        self._played: list[int] = []

    def advance(self, config: ArenaConfig, rng: np.random.Generator) -> int:
        """Move to the next episode's arena id and return it."""
        ids = [arena_id for arena_id, _ in config.arenas]
        if config.randomize_arenas:
            if self.current is not None and self.current not in self._played:
                self._played.append(self.current)
            if len(self._played) >= len(ids):
                self._played = [self.current] if len(ids) > 1 else []
            choices = [i for i in ids if i not in self._played]
            self.current = choices[int(rng.integers(len(choices)))]
        elif self.current is None:
            self.current = config.first_id
        else:
            self.current = self.current + 1 if self.current + 1 in ids else ids[0]
        return self.current


def default_config() -> ArenaConfig:
    """What the player plays before any configuration arrives: one empty, unlimited arena."""
    return ArenaConfig(arenas=((0, Arena()),), source="<no arena configuration>")


class Episodes:
    """The embedded simulator behind the player: one agent, episode after episode.

    Args:
        options: the player's settings.
        seed: the handshake's seed (any int32).
        log: where warnings go (the player's log).

    """

    def __init__(self, options: PlayerOptions, seed: int, log: Callable[[str], None]) -> None:

        self.options = options
        self.resolution = clamp_resolution(options.resolution)
        self._render_size = max(self.resolution, RENDER_MIN)
        self._sim = Simulator(self._render_size, render=options.use_camera)
        self._rng = np.random.default_rng(int(seed) % 2**32)
        self._log = log
        self._config = default_config()
        self._order = ArenaOrder()
        self._angles = ray_angles(options.rays_per_side, options.ray_max_degrees)
        self._running = False
        self.arena_id: int | None = None
        self.episodes = 0

    def configure(self, config: ArenaConfig) -> None:
        """Use ``config`` from the next episode start on."""
        merged = [arena_id for arena_id, arena in config.arenas if arena.merge_next_arena]
        if merged:
            self._log(f"warning: mergeNextArena (arenas {merged}) is not supported by the "
                      "llm-aai bridge; each arena plays as its own episode")
        self._config = config

    def reset(self) -> list[AgentRow]:
        """A RESET: abandon the episode (no terminal row, as the player does) and start anew."""
        return [self._start()]

    def step(self, move: int, turn: int) -> list[AgentRow]:
        """One decision: ``decisionPeriod`` physics steps; an ending step adds the next start."""
        if not self._running:  # a STEP before any RESET starts the first episode
            return [self._start()]
        result = self._sim.step(move, turn, physics_steps=self.options.decision_period)
        row = self._row(result.reward, result.done)
        if not result.done:
            return [row]
        return [row, self._start()]

    def close(self) -> None:
        """Release the renderer."""
        self._sim.close()

    def _start(self) -> AgentRow:

        arena_id = self._order.advance(self._config, self._rng)
        arena = self._config.arena(arena_id)
        source = f"{self._config.source or '<arena>'} arena {arena_id}"
        placed = place_arena(arena, self._rng, source=source)
        for note in placed.dropped:
            self._log(f"warning: {note}")
        self._sim.load(placed, self._rng)
        if arena.random_seed:
            self._rng = np.random.default_rng(arena.random_seed % 2**32)
        self.arena_id = arena_id
        self.episodes += 1
        self._running = True
        return self._row(0.0, False)

    def _row(self, reward: float, done: bool) -> AgentRow:
        state = self._sim.state
        camera = None
        if self.options.use_camera:
            camera = observations.camera_frame(self._sim.observe(), self.resolution)
        rays = None
        if self.options.use_rays:
            rays = observations.rays_vector(self._sim.cast_rays(self._angles))
        vector = observations.vector(state.health, state.local_velocity, state.position)
        if done:
            self._running = False
        return AgentRow(float(reward), bool(done), camera, rays, vector)
