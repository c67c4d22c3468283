"""Typed, immutable view of an Animal-AI arena configuration file.

The YAML is parsed once, at the boundary (see ``llm_aai.arena.yaml_io``), into these frozen
dataclasses. Everything downstream (the placer, the simulator, the runner) reads these objects,
never raw YAML, so a value can only be wrong in one place: where it was parsed.

Random values keep AAI's own encoding: a coordinate, rotation, size axis or colour channel of
``-1`` (any negative number) means "draw at random", and a missing list entry means the same
for the whole field. ``llm_aai.arena.placement`` resolves them with a seeded RNG.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

RANDOM = -1.0
"""AAI's marker for "draw this value at random"."""


def is_finite(value: float) -> bool:
    """Whether a parsed number is usable (YAML allows .nan and .inf)."""
    return not (math.isnan(value) or math.isinf(value))


@dataclass(frozen=True)
class SourceLocation:
    """Where a value came from, so an error can name the file and line."""

    file: str
    line: int  # 1-based

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class Vector3:
    """A position or size in Unity coordinates (y up; x, z span the 40x40 floor)."""

    x: float = 0.0
    y: float = 0.0
    z: float = 0.0
    location: SourceLocation | None = field(default=None, compare=False, repr=False)

    def as_tuple(self) -> tuple[float, float, float]:
        """Return ``(x, y, z)``."""
        return (self.x, self.y, self.z)


@dataclass(frozen=True)
class RGB:
    """A colour with channels 0-255 as written in the YAML (negative = random channel)."""

    r: float = 0.0
    g: float = 0.0
    b: float = 0.0
    location: SourceLocation | None = field(default=None, compare=False, repr=False)

    def as_tuple(self) -> tuple[float, float, float]:
        """Return ``(r, g, b)``."""
        return (self.r, self.g, self.b)


@dataclass(frozen=True)
class Item:
    """One ``!Item``: an object type and the per-instance lists that place its copies.

    Instance ``k`` uses entry ``k`` of each list; the number of instances is the longest list
    (at least one). ``extra`` keeps the optional keys AAI knows but the testbed never uses
    (``delays``, ``spawnCounts``...) so a config round-trips without loss.
    """

    name: str
    positions: tuple[Vector3, ...] = ()
    rotations: tuple[float, ...] = ()
    sizes: tuple[Vector3, ...] = ()
    colors: tuple[RGB, ...] = ()
    skins: tuple[str, ...] = ()
    frozen_agent_delays: tuple[float, ...] = ()
    extra: tuple[tuple[str, Any], ...] = ()
    location: SourceLocation | None = field(default=None, compare=False, repr=False)
    key_lines: tuple[tuple[str, int], ...] = field(default=(), compare=False, repr=False)

    @property
    def instance_count(self) -> int:
        """How many objects this item spawns (AAI: the longest list, at least one)."""
        return max(len(self.positions), len(self.rotations), len(self.sizes), len(self.colors), 1)


@dataclass(frozen=True)
class Arena:
    """One ``!Arena``: the rules of an episode and the items in it.

    ``time_limit`` is AAI's ``t`` / ``timeLimit`` in its own units (5 physics frames each);
    0 means unlimited. ``pass_mark`` decides pass/fail only; it never ends an episode.
    """

    time_limit: int = 0
    pass_mark: float = 0.0
    items: tuple[Item, ...] = ()
    blackouts: tuple[int, ...] = ()
    random_seed: int = 0
    merge_next_arena: bool = False
    location: SourceLocation | None = field(default=None, compare=False, repr=False)
    key_lines: tuple[tuple[str, int], ...] = field(default=(), compare=False, repr=False)

    @property
    def agent(self) -> Item | None:
        """The ``Agent`` item, or None when AAI places the agent at random."""
        return next((item for item in self.items if item.name == "Agent"), None)


@dataclass(frozen=True)
class ArenaConfig:
    """A whole ``!ArenaConfig`` file: one or more arenas played in id order."""

    arenas: tuple[tuple[int, Arena], ...]
    randomize_arenas: bool = False
    show_notification: bool = False
    can_reset_episode: bool = True
    can_change_perspective: bool = True
    source: str | None = field(default=None, compare=False)

    @property
    def first_id(self) -> int:
        """The id of the arena a fresh player plays first: 0, or the first listed without one.

        Unity's ``TrainingArena`` counts arenas from 0 whatever order the file lists them in
        (docs: the AAI rules, "Multiple arenas per file"); every backend and the bridge start
        here, so a file listing ``1:`` before ``0:`` plays arena 0 first everywhere.
        """
        ids = [key for key, _ in self.arenas]
        return 0 if 0 in ids else ids[0]

    def arena(self, arena_id: int | None = None) -> Arena:
        """Return the arena with ``arena_id``, or the one played first (``first_id``) when None."""
        if arena_id is None:
            arena_id = self.first_id
        for key, arena in self.arenas:
            if key == arena_id:
                return arena
        known = ", ".join(str(key) for key, _ in self.arenas)
        raise KeyError(f"{self.source or 'config'} has no arena {arena_id} (has: {known})")
