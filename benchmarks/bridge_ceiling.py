"""The bridge without its world: how fast animalai and the player's serving alone go.

``benchmarks.bench_rl`` launches this module in the Unity player's place, as animalai
launches ``python -m llm_aai.bridge serve``. It is that player, with episodes that play their
first step for real and then answer every later step with the same rows: no physics, no
frame, the same message. What is left of a step is what no speed-up of the simulator
touches: animalai's own work (its gRPC server, the pipe between its threads,
``mlagents_envs`` reading the message) and the player's gRPC call and reply.

Why measure it: the two processes take turns, so a bridge step costs about this ceiling's
step plus the gymnasium env's step (physics and the frame), and the bridge's rate is about
``1 / (1 / ceiling + 1 / env)`` (docs/bridge.md, "Speed").
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

from llm_aai.bridge.episodes import AgentRow, Episodes
from llm_aai.bridge.launcher import LAUNCHER_NAME
from llm_aai.cli.bridge import serve_main

_ROOT = Path(__file__).resolve().parents[1]


class ReplayedEpisodes(Episodes):
    """Episodes whose steps after the first answer with the first step's rows again."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._replayed: list[AgentRow] | None = None

    def step(self, move: int, turn: int) -> list[AgentRow]:
        """The first ongoing step's rows, played once and then repeated."""
        if self._replayed is not None:
            return self._replayed
        rows = super().step(move, turn)
        if len(rows) == 1 and not rows[0].done:
            self._replayed = rows
        return rows


def install(directory: Path) -> Path:
    """Write ``directory/AAI.x86_64``, which runs this module with this interpreter."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / LAUNCHER_NAME
    root = shlex.quote(str(_ROOT))
    path.write_text(
        "#!/bin/sh\n"
        f"export PYTHONPATH={root}${{PYTHONPATH:+:$PYTHONPATH}}\n"
        f"exec {shlex.quote(sys.executable)} -m benchmarks.bridge_ceiling \"$@\"\n",
        encoding="utf-8")
    os.chmod(path, 0o755)
    return path


if __name__ == "__main__":
    raise SystemExit(serve_main(sys.argv[1:], episodes_type=ReplayedEpisodes))
