"""A bridge player whose first reset never finishes, like a Unity player stuck building.

``python -m tests.env.stuck_reset_player`` serves as the real player does (handshake and
all), writes its pid to ``$STUCK_PLAYER_PID_FILE`` when animalai asks for the first episode,
and then sleeps instead of answering, so ``AnimalAIEnvironment(...)`` times out inside its
constructor.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from llm_aai.bridge.episodes import AgentRow, Episodes
from llm_aai.cli.bridge import serve_main


class StuckEpisodes(Episodes):
    """Episodes whose reset never returns (within any test's patience)."""

    def reset(self) -> list[AgentRow]:
        Path(os.environ["STUCK_PLAYER_PID_FILE"]).write_text(str(os.getpid()))
        time.sleep(600)
        return super().reset()


if __name__ == "__main__":
    raise SystemExit(serve_main(sys.argv[1:], episodes_type=StuckEpisodes))
