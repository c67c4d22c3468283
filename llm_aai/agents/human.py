"""Play from the terminal: see the frame, type a script.

Useful to try an arena by hand and to feel what the model faces. Streams are injectable
so tests drive it without a terminal.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from PIL import Image

from llm_aai.agents.base import AgentReply, PriorTurn, TurnInput

__all__ = ["HumanAgent"]


class HumanAgent:
    """Prints where each frame is and the turn's text, then reads a script line.

    Args:
        input_stream: where scripts are read from (one line per turn).
        output_stream: where prompts are written.
        frame_dir: where frames are saved when the runner did not save them already
            (default: a fresh temporary directory).
        name: agent name in logs.

    """

    def __init__(self, input_stream: TextIO | None = None, output_stream: TextIO | None = None,
                 frame_dir: Path | None = None, name: str = "human") -> None:
        self.input = input_stream or sys.stdin
        self.output = output_stream or sys.stdout
        self.frame_dir = Path(frame_dir) if frame_dir else None
        self.name = name
        self._turn = 0

    def start_episode(self, system_prompt: str, seed: int,
                      prelude: Sequence[PriorTurn] = ()) -> None:
        """Show the background prompt once, like the model reads it.

        A worked example (``prelude``) is not shown: a person at
        the terminal plays from the frames and the background prompt.
        """
        self._turn = 0
        self._write(system_prompt.rstrip() + "\n\nA new level begins.\n")

    def act(self, turn: TurnInput) -> AgentReply:
        """Show the turn, wait for a line of script.

        Raises:
            EOFError: the input stream ended (e.g. Ctrl-D).

        """
        self._turn += 1
        paths = list(turn.image_paths) or self._save(turn)
        lines = [f"--- turn {self._turn} ---"]
        if turn.preamble:
            lines.append(turn.preamble)
        lines += [f"frame: {path}" for path in paths]
        lines += [turn.text, "your script> "]
        self._write("\n".join(lines))
        started = time.perf_counter()
        line = self.input.readline()
        if not line:
            raise EOFError("no more input: the human player left")
        return AgentReply(text=line.strip(), model=self.name,
                          latency_s=time.perf_counter() - started)

    def _save(self, turn: TurnInput) -> list[Path]:
        if self.frame_dir is None:
            self.frame_dir = Path(tempfile.mkdtemp(prefix="llm-aai-human-"))
        self.frame_dir.mkdir(parents=True, exist_ok=True)
        paths = []
        for index, image in enumerate(turn.images):
            path = self.frame_dir / f"turn{self._turn:03d}-{index}.png"
            Image.fromarray(image[:, :, :3]).save(path)
            paths.append(path)
        return paths

    def _write(self, text: str) -> None:
        self.output.write(text)
        self.output.flush()
