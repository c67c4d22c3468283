"""The checks every variant passes before it is kept, each on the real placer and simulator.

1. The file is an arena ``python -m llm_aai.arenas validate`` accepts (it is read back with
   the validating loader).
2. It places every object its parent places, on every validation seed: no object is dropped
   for lack of space because of a transformation. (A few testbed files drop an object
   themselves, a wall laid into another, in AAI as here; their variants may drop that one.)
3. Its placed arena differs from its parent's and from every variant kept before it
   (``placed_checksum``: the placed objects, rounded to the millimetre).
4. The built-in heuristic agent passes it on exactly the seeds on which it passes the parent:
   a transformation that made a detour trivial, or a trivial task impossible, shows up there.
5. The oracle solves it on every seed, by the task's own pass mark, within its time limit.

The cheap checks run first, so the oracle's search is spent only on candidates that could
still be kept. Each failed check raises ``Rejected`` with one of the ``REASONS``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from llm_aai.agents.base import TurnInput
from llm_aai.agents.heuristic import HeuristicAgent
from llm_aai.arena.errors import PlacementError
from llm_aai.arena.model import Arena
from llm_aai.arena.placement import PlacedArena, place_arena
from llm_aai.env.animalai_env import AnimalAIEnv, world_seed
from llm_aai.oracle import DEFAULT_BUDGET, SearchSettings, play_oracle_episode
from llm_aai.protocol import Episode

INVALID = "not a valid arena file"
DROPPED = "an object the parent places is dropped"
DUPLICATE = "same placed arena as the parent or an earlier variant"
HEURISTIC = "the heuristic agent passes it on other seeds than the parent"
UNSOLVED = "unsolved by the oracle"
PARENT_UNSOLVED = "parent unsolved by the oracle"
PARENT_NO_ROOM = "the parent's agent finds no room"
CRASH = "the simulator failed"
REASONS = (INVALID, DROPPED, DUPLICATE, HEURISTIC, UNSOLVED, CRASH)
"""Why a candidate variant is rejected (the counts in ``variants.csv`` use these words)."""


class Rejected(Exception):
    """A candidate (or a parent) failed a check; ``reason`` is one of the module's reasons."""

    def __init__(self, reason: str, detail: str = ""):
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True)
class ValidationSettings:
    """How hard a variant is checked.

    Attributes:
        seeds: episodes per arena for the heuristic and the oracle (seeds 1..seeds, as a run's
            trials; the world of seed s is ``world_seed(s)`` for both).
        budget: the oracle's search budget per episode (simulated AAI steps).
        resolution: the heuristic agent's frame size (512 px, the runs' default, which its
            thresholds are calibrated for).
    """

    seeds: int = 1
    budget: int = DEFAULT_BUDGET
    resolution: int = 512


@dataclass(frozen=True)
class Verdict:
    """What validation measured on one arena (parent or variant).

    Attributes:
        checksum: ``placed_checksum`` of the arena placed with the first seed's world.
        placed: per seed, the (item, instance) of every object placed.
        heuristic: per seed, whether the heuristic agent passed.
        oracle_rewards: per seed, the oracle's return.
    """

    checksum: str
    placed: tuple[frozenset, ...]
    heuristic: tuple[bool, ...]
    oracle_rewards: tuple[float, ...]


def placed_checksum(placed: PlacedArena) -> str:
    """The sha256 of a placed arena's agent and objects (names, poses, sizes, colours, to 1 mm)."""
    lines = []
    for obj in (placed.agent, *placed.objects):
        numbers = (*obj.position, *obj.size, obj.yaw % 360.0, *obj.color)
        lines.append(obj.spec.name + " " + " ".join(f"{v:.3f}" for v in numbers))
    return hashlib.sha256("\n".join(sorted(lines)).encode()).hexdigest()


def place_all(arena: Arena, settings: ValidationSettings, source: str) -> list[PlacedArena]:
    """The arena placed in each validation seed's world.

    Raises:
        PlacementError: the agent finds no spot at all.
    """
    return [place_arena(arena, np.random.default_rng(world_seed(seed)), source=source)
            for seed in range(1, settings.seeds + 1)]


def placed_keys(placed: PlacedArena) -> frozenset:
    """The (item, instance) of every object placed (the agent included)."""
    return frozenset((obj.item_index, obj.instance_index)
                     for obj in (placed.agent, *placed.objects))


class Validator:
    """Runs the heuristic agent and the oracle on arena files (one env, reused).

    Args:
        settings: seeds, oracle budget, frame size.
    """

    def __init__(self, settings: ValidationSettings):
        self.settings = settings
        self._env: AnimalAIEnv | None = None

    def close(self) -> None:
        """Release the renderer."""
        if self._env is not None:
            self._env.close()
            self._env = None

    def heuristic_passes(self, path: Path, pass_mark: float) -> tuple[bool, ...]:
        """Whether the heuristic agent passes ``path`` on each validation seed (paper protocol)."""
        if self._env is None:
            self._env = AnimalAIEnv(resolution=self.settings.resolution)
        results = []
        for seed in range(1, self.settings.seeds + 1):
            agent = HeuristicAgent()
            episode = Episode(self._env)
            start = episode.start(seed=seed, arena=str(path))
            agent.start_episode("", seed)
            images = [o["image"] for o in start.observations]
            while episode.wants_reply:
                reply = agent.act(TurnInput(images=images, text=""))
                episode.play(reply.text)
                if episode.wants_reply:
                    images = [episode.observe()["image"]]
            episode.run_out()
            results.append(episode.totals.reward >= pass_mark)
        return tuple(results)

    def oracle_rewards(self, placed: list[PlacedArena], pass_mark: float) -> tuple[float, ...]:
        """The oracle's return on each placed world (seed s plays ``placed[s - 1]``)."""
        return tuple(play_oracle_episode(world, SearchSettings(
            budget=self.settings.budget, seed=seed, pass_mark=pass_mark)).reward
            for seed, world in enumerate(placed, start=1))

    def judge_parent(self, arena: Arena, path: Path, pass_mark: float) -> Verdict:
        """Measure the parent task; a parent the oracle cannot solve yields no variants.

        Raises:
            Rejected: ``PARENT_NO_ROOM`` or ``PARENT_UNSOLVED``.
        """
        try:
            placed = place_all(arena, self.settings, str(path))
        except PlacementError as error:
            raise Rejected(PARENT_NO_ROOM, str(error)) from error
        rewards = self.oracle_rewards(placed, pass_mark)
        if min(rewards) < pass_mark:
            raise Rejected(PARENT_UNSOLVED, f"oracle returns {_rewards(rewards)}, pass mark "
                           f"{pass_mark:g}")
        return Verdict(placed_checksum(placed[0]), tuple(map(placed_keys, placed)),
                       self.heuristic_passes(path, pass_mark), rewards)

    def judge_variant(self, arena: Arena, path: Path, pass_mark: float, parent: Verdict,
                      seen: set[str]) -> Verdict:
        """Check a candidate written at ``path`` (checks 2-5 of the module doc).

        Raises:
            Rejected: the first check it fails.
        """
        try:
            placed = place_all(arena, self.settings, str(path))
        except PlacementError as error:
            raise Rejected(DROPPED, str(error)) from error
        for seed, (world, before) in enumerate(zip(placed, parent.placed, strict=True), 1):
            if before - placed_keys(world):
                raise Rejected(DROPPED, next(iter(world.dropped), f"seed {seed}"))
        checksum = placed_checksum(placed[0])
        if checksum in seen:
            raise Rejected(DUPLICATE)
        heuristic = self.heuristic_passes(path, pass_mark)
        if heuristic != parent.heuristic:
            raise Rejected(HEURISTIC, f"parent {passes_text(parent.heuristic)}, variant "
                           f"{passes_text(heuristic)}")
        rewards = self.oracle_rewards(placed, pass_mark)
        if min(rewards) < pass_mark:
            raise Rejected(UNSOLVED, f"oracle returns {_rewards(rewards)}, pass mark "
                           f"{pass_mark:g}")
        return Verdict(checksum, tuple(map(placed_keys, placed)), heuristic, rewards)


def _rewards(rewards: tuple[float, ...]) -> str:
    return "/".join(f"{r:g}" for r in rewards)


def passes_text(passes: tuple[bool, ...]) -> str:
    """Per-seed passes as letters, ``P`` passed, ``F`` failed (``PFP``)."""
    return "".join("P" if p else "F" for p in passes)
