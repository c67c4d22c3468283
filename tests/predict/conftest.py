"""Small arenas built for each question kind, and episodes started in them."""

from __future__ import annotations

import pytest

from llm_aai.env import AnimalAIEnv
from llm_aai.protocol import Episode
from tests.helpers.arenas import write_arena


def item(name: str, x: float, z: float, *, y: float = 0, rotation: float = 0,
         size: tuple[float, float, float] = (1, 1, 1)) -> str:
    """One ``!Item`` of an arena file, at (x, y, z), turned ``rotation`` degrees."""
    lines = ["- !Item", f"  name: {name}",
             f"  positions: [!Vector3 {{x: {x}, y: {y}, z: {z}}}]", f"  rotations: [{rotation}]"]
    if name != "Agent":
        lines.append(f"  sizes: [!Vector3 {{x: {size[0]}, y: {size[1]}, z: {size[2]}}}]")
    return "\n".join(lines)


def arena_text(*items: str, t: int = 500) -> str:
    """An arena file of ``items`` (the agent among them)."""
    body = "\n".join("    " + line for entry in items for line in entry.splitlines())
    return f"!ArenaConfig\narenas:\n  0: !Arena\n    t: {t}\n    items:\n{body}\n"


TWO_BALLS = arena_text(
    item("Agent", 20, 20),
    item("GoodGoal", 20, 26),                                  # 6 m ahead
    item("BadGoal", 20, 14),                                   # 6 m behind
    item("Wall", 26, 20, size=(1, 3, 10)),                     # on the right, in the way
    item("DeathZone", 13, 20, size=(3, 0, 6)),                 # on the left
)
"""The agent at (20, 20) facing +z: a green ball ahead, a red one behind, a wall on the
right and a death zone on the left (the what-if tests' arena)."""


@pytest.fixture
def start(tmp_path):
    """Start an episode in an arena file's text; every env made is closed at the end."""
    envs = []

    def started(text: str, name: str = "arena.yml", seed: int = 0) -> Episode:
        env = AnimalAIEnv(write_arena(tmp_path, text, name), resolution=64)
        envs.append(env)
        episode = Episode(env)
        episode.start(seed=seed)
        return episode

    yield started
    for env in envs:
        env.close()
