"""A task's conversation context (``--context across-tasks``) in a form any machine can play.

Locally a task's context names the frames of the earlier tasks by their files in the run
directory (``llm_aai.runner.conversation.context_of``), and the agent sends those files again
byte for byte. A worker on another node of a cluster cannot read the driver's disk, so the
driver packs the context with the files' bytes, and the worker writes them into its own scratch
folder and points the earlier turns there: the agent then sends the same bytes as locally.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from llm_aai.agents.base import PriorTurn
from llm_aai.runner.episode import ConversationContext

__all__ = ["ShippedContext"]


@dataclass(frozen=True)
class ShippedContext:
    """A conversation context with the frame files of its earlier turns as bytes.

    Attributes:
        context: the context, each earlier frame named by its path relative to the run's
            episodes folder (``<episode id>/frames/<file>``).
        frames: each such relative path (POSIX form) -> the frame file's bytes.

    """

    context: ConversationContext
    frames: dict[str, bytes]

    @classmethod
    def pack(cls, context: ConversationContext, episodes_dir: Path) -> ShippedContext:
        """Read the earlier turns' frames under ``episodes_dir`` into a shippable context.

        Raises:
            ValueError: a frame outside ``episodes_dir`` (a context not read from this run).
            OSError: a frame file that cannot be read.

        """
        frames: dict[str, bytes] = {}
        earlier = []
        for prior in context.earlier:
            relative = tuple(_inside(Path(path), episodes_dir, context.conversation)
                             for path in prior.turn.image_paths)
            for name, path in zip(relative, prior.turn.image_paths, strict=True):
                frames[name.as_posix()] = Path(path).read_bytes()
            earlier.append(_with_paths(prior, relative))
        return cls(dataclasses.replace(context, earlier=tuple(earlier)), frames)

    @property
    def size_bytes(self) -> int:
        """The frames' bytes it carries (most of what it weighs)."""
        return sum(len(data) for data in self.frames.values())

    def unpack(self, directory: Path) -> ConversationContext:
        """Write the frames under ``directory`` and return the context naming them there."""
        for name, data in self.frames.items():
            path = directory / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        earlier = tuple(_with_paths(prior, tuple(directory / p for p in prior.turn.image_paths))
                        for prior in self.context.earlier)
        return dataclasses.replace(self.context, earlier=earlier)


def _with_paths(prior: PriorTurn, paths: tuple[Path, ...]) -> PriorTurn:
    return dataclasses.replace(prior, turn=dataclasses.replace(prior.turn, image_paths=paths))


def _inside(path: Path, episodes_dir: Path, conversation: str) -> Path:
    if not path.is_relative_to(episodes_dir):
        raise ValueError(f"conversation {conversation}: frame {path} is not in the run's "
                         f"episodes folder {episodes_dir}")
    return path.relative_to(episodes_dir)
