"""The checks every variant passes before it is kept, each on the real placer and simulator.

1. The file is an arena ``python -m llm_aai.arenas validate`` accepts (it is read back with
   the validating loader).
2. It places every object its parent places, on every validation seed: no object is dropped
   for lack of space because of a transformation. (A few testbed files drop an object
   themselves, a wall laid into another, in AAI as here; their variants may drop that one.)
3. Its placed arena differs from its parent's and from every variant kept before it
   (``placed_checksum``: the placed objects, rounded to the millimetre).
4. The built-in heuristic agent passes it about as often as the parent: over
   ``heuristic_seeds`` episodes (seeds 1..n, the same for both), its pass counts differ by at
   most ``heuristic_tolerance``. A transformation that made a detour trivial (the parent
   failed on every seed, the variant passes on most) or a trivial task impossible shows up
   there. Why a count over several seeds and not a pass on one: the agent draws its turning
   direction and its exploration from the seed, so where its success hangs on those draws a
   mirror image (the right direction becomes the wrong one), a turn or a shift passes or
   fails on one seed by luck, not by difficulty. Over 3 seeds both directions are tried, and
   only a change of two seeds or more is read as a change of difficulty. The variant's
   episodes stop as soon as the verdict is certain (two passes of a parent passed three
   times are enough).
5. The oracle solves it on every seed, by the task's own pass mark, within its time limit.

All of it in one Animal-AI build: the parent's. A parent is measured in the builds of
``physics_builds`` in turn (3.x/4.x first) and belongs to the first whose oracle solves it;
its variants are checked in that build alone. Why not 3.x alone: eleven testbed tasks the
Olympics entrants passed are solvable only in the 2019 build they played (a bridge laid over
a death zone, whose trigger ends at the floor there; bounce balls that rebound with the 2019
material: docs/testbed-audit.md), and a variant of such a task keeps its logic, so it is as
solvable as its parent in each build. Checking it in the build that solves the parent is what
proves it solvable at all. A simulator failure in one build is the parent's failure (recorded
as such), not a reason to try the next.

The cheap checks run first, so the oracle's search is spent only on candidates that could
still be kept. Each failed check raises ``Rejected`` with one of the ``REASONS``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
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
from llm_aai.sim.builds import PHYSICS_BUILDS

INVALID = "not a valid arena file"
DROPPED = "an object the parent places is dropped"
DUPLICATE = "same placed arena as the parent or an earlier variant"
HEURISTIC = "the heuristic agent's pass count differs from the parent's"
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
        seeds: placements and oracle episodes per arena (seeds 1..seeds, as a run's trials;
            the world of seed s is ``world_seed(s)``).
        budget: the oracle's search budget per episode (simulated AAI steps).
        resolution: the heuristic agent's frame size (512 px, the runs' default, which its
            thresholds are calibrated for).
        heuristic_seeds: heuristic-agent episodes per arena (seeds 1..n) for the parity check.
        heuristic_tolerance: the largest difference of the heuristic's pass counts (parent
            against variant, over ``heuristic_seeds``) still read as the same difficulty.
        physics_builds: the Animal-AI builds a parent is measured in, in order; the first
            whose oracle solves it is the build its variants are checked in.
    """

    seeds: int = 1
    budget: int = DEFAULT_BUDGET
    resolution: int = 512
    heuristic_seeds: int = 3
    heuristic_tolerance: int = 1
    physics_builds: tuple[str, ...] = PHYSICS_BUILDS

    def __post_init__(self) -> None:
        object.__setattr__(self, "physics_builds", tuple(self.physics_builds))
        unknown = [b for b in self.physics_builds if b not in PHYSICS_BUILDS]
        if not self.physics_builds or unknown or len(set(self.physics_builds)) != len(
                self.physics_builds):
            raise ValueError(f"physics_builds {list(self.physics_builds)}: give one or more "
                             f"distinct builds of {', '.join(PHYSICS_BUILDS)}")
        if self.seeds < 1 or self.heuristic_seeds < 1 or self.budget < 0:
            raise ValueError("validation needs seeds >= 1, heuristic_seeds >= 1, budget >= 0")
        if not 0 <= self.heuristic_tolerance < self.heuristic_seeds:
            raise ValueError(f"heuristic_tolerance {self.heuristic_tolerance} must be 0 to "
                             f"{self.heuristic_seeds - 1} (below heuristic_seeds), or the "
                             "parity check could never reject")


@dataclass(frozen=True)
class Verdict:
    """What validation measured on one arena (parent or variant).

    Attributes:
        checksum: ``placed_checksum`` of the arena placed with the first seed's world.
        placed: per seed, the (item, instance) of every object placed.
        heuristic: per heuristic seed played, whether the heuristic agent passed (a
            variant's episodes stop once the parity verdict is certain, so it may be shorter
            than the parent's).
        oracle_rewards: per seed, the oracle's return.
        physics_build: the build all of it was measured in.
    """

    checksum: str
    placed: tuple[frozenset, ...]
    heuristic: tuple[bool, ...]
    oracle_rewards: tuple[float, ...]
    physics_build: str = PHYSICS_BUILDS[0]


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
    """Runs the heuristic agent and the oracle on arena files (one env per build, reused).

    Args:
        settings: seeds, oracle budget, frame size, builds.
    """

    def __init__(self, settings: ValidationSettings):
        self.settings = settings
        self._envs: dict[str, AnimalAIEnv] = {}

    def close(self) -> None:
        """Release the renderers."""
        for env in self._envs.values():
            env.close()
        self._envs.clear()

    def _env(self, physics_build: str) -> AnimalAIEnv:
        if physics_build not in self._envs:
            self._envs[physics_build] = AnimalAIEnv(
                resolution=self.settings.resolution,
                backend_kwargs={"physics_build": physics_build})
        return self._envs[physics_build]

    def heuristic_passes(self, path: Path, pass_mark: float,
                         enough: Callable[[tuple[bool, ...]], bool] | None = None,
                         physics_build: str = PHYSICS_BUILDS[0]) -> tuple[bool, ...]:
        """Whether the heuristic agent passes ``path`` on each heuristic seed (paper protocol).

        Args:
            path: the arena file.
            pass_mark: the task's pass mark.
            enough: called with the passes so far after each episode; True stops early.
            physics_build: the build the episodes are played in.
        """
        env = self._env(physics_build)
        results: list[bool] = []
        for seed in range(1, self.settings.heuristic_seeds + 1):
            if enough is not None and results and enough(tuple(results)):
                break
            agent = HeuristicAgent()
            episode = Episode(env)
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

    def oracle_rewards(self, placed: list[PlacedArena], pass_mark: float,
                       physics_build: str = PHYSICS_BUILDS[0]) -> tuple[float, ...]:
        """The oracle's return on each placed world (seed s plays ``placed[s - 1]``)."""
        return tuple(play_oracle_episode(world, SearchSettings(
            budget=self.settings.budget, seed=seed, pass_mark=pass_mark),
            physics_build=physics_build).reward
            for seed, world in enumerate(placed, start=1))

    def judge_parent(self, arena: Arena, path: Path, pass_mark: float) -> Verdict:
        """Measure the parent task in the first build whose oracle solves it.

        A parent no build solves yields no variants.

        Raises:
            Rejected: ``PARENT_NO_ROOM`` or ``PARENT_UNSOLVED`` (each build's returns).
        """
        try:
            placed = place_all(arena, self.settings, str(path))
        except PlacementError as error:
            raise Rejected(PARENT_NO_ROOM, str(error)) from error
        tried = []
        for build in self.settings.physics_builds:
            rewards = self.oracle_rewards(placed, pass_mark, build)
            if min(rewards) >= pass_mark:
                return Verdict(placed_checksum(placed[0]), tuple(map(placed_keys, placed)),
                               self.heuristic_passes(path, pass_mark, physics_build=build),
                               rewards, build)
            tried.append(f"{build} build {_rewards(rewards)}")
        raise Rejected(PARENT_UNSOLVED, f"oracle returns {', '.join(tried)}, pass mark "
                       f"{pass_mark:g}")

    def judge_variant(self, arena: Arena, path: Path, pass_mark: float, parent: Verdict,
                      seen: set[str]) -> Verdict:
        """Check a candidate written at ``path`` in the parent's build (the module's 2-5).

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
        if len(parent.heuristic) != self.settings.heuristic_seeds:
            raise ValueError(f"the parent was measured on {len(parent.heuristic)} heuristic "
                             f"seeds, these settings ask {self.settings.heuristic_seeds}")
        parity = HeuristicParity(sum(parent.heuristic), self.settings.heuristic_seeds,
                                 self.settings.heuristic_tolerance)
        build = parent.physics_build
        heuristic = self.heuristic_passes(path, pass_mark, enough=parity.decided,
                                          physics_build=build)
        if not parity.agrees(heuristic):
            raise Rejected(HEURISTIC, f"parent {passes_text(parent.heuristic)}, variant "
                           f"{passes_text(heuristic, len(parent.heuristic))} (pass counts "
                           f"may differ by {self.settings.heuristic_tolerance})")
        rewards = self.oracle_rewards(placed, pass_mark, build)
        if min(rewards) < pass_mark:
            raise Rejected(UNSOLVED, f"oracle returns {_rewards(rewards)} in the {build} "
                           f"build, pass mark {pass_mark:g}")
        return Verdict(checksum, tuple(map(placed_keys, placed)), heuristic, rewards, build)


@dataclass(frozen=True)
class HeuristicParity:
    """The parity check: the variant's pass count within ``tolerance`` of the parent's.

    Attributes:
        target: the parent's pass count.
        seeds: heuristic episodes per arena.
        tolerance: the largest difference read as the same difficulty.
    """

    target: int
    seeds: int
    tolerance: int

    def _range(self, passes: tuple[bool, ...]) -> tuple[int, int]:
        """The least and most passes the variant can end with, given those so far."""
        return sum(passes), sum(passes) + self.seeds - len(passes)

    def agrees(self, passes: tuple[bool, ...]) -> bool:
        """Whether every way the unplayed seeds could go keeps the count within tolerance."""
        low, high = self._range(passes)
        return low >= self.target - self.tolerance and high <= self.target + self.tolerance

    def decided(self, passes: tuple[bool, ...]) -> bool:
        """Whether the verdict is certain already (the rest of the seeds cannot change it)."""
        low, high = self._range(passes)
        return (self.agrees(passes) or low > self.target + self.tolerance
                or high < self.target - self.tolerance)


def _rewards(rewards: tuple[float, ...]) -> str:
    return "/".join(f"{r:g}" for r in rewards)


def passes_text(passes: tuple[bool, ...], seeds: int | None = None) -> str:
    """Per-seed passes as letters, ``P`` passed, ``F`` failed, ``-`` not played (``PP-``)."""
    text = "".join("P" if p else "F" for p in passes)
    return text + "-" * ((seeds or 0) - len(passes))
