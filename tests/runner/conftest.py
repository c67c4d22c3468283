"""Small hand-written arenas for runner tests (real files, real simulator)."""

from __future__ import annotations

from pathlib import Path

import pytest

ARENA = """!ArenaConfig
arenas:
  0: !Arena
    t: {t}
    pass_mark: {pass_mark}
    items:
    - !Item
      name: Agent
      positions: [!Vector3 {{x: 20, y: 0, z: 10}}]
      rotations: [0]
    - !Item
      name: GoodGoal
      positions: [!Vector3 {{x: 20, y: 0, z: 16}}]
      sizes: [!Vector3 {{x: 1, y: 1, z: 1}}]
"""


@pytest.fixture
def make_arena(tmp_path):
    """Write an arena with a green ball 6 m straight ahead of the agent."""

    def make(t: int = 250, pass_mark: float = 0.0) -> Path:
        path = tmp_path / f"arena_t{t}_p{pass_mark}.yaml"
        path.write_text(ARENA.format(t=t, pass_mark=pass_mark))
        return path

    return make
