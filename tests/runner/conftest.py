"""Small hand-written arenas for runner tests (real files, real simulator)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.arenas import goal_ahead


@pytest.fixture
def make_arena(tmp_path):
    """Write an arena with a green ball 6 m straight ahead of the agent."""

    def make(t: int = 250, pass_mark: float = 0.0) -> Path:
        path = tmp_path / f"arena_t{t}_p{pass_mark}.yaml"
        path.write_text(goal_ahead(t=t, pass_mark=pass_mark))
        return path

    return make
