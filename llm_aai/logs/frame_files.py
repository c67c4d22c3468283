"""The file of a frame a turn record names, only if it lies inside the record's episode folder.

A run folder may come from anyone (a colleague's results, a download), and a turn's
``sent_images`` are paths its readers open: the replay draws them into an animation and checks
them against a fresh simulation, a resumed ``--context across-tasks`` run sends them to its
model again, a worked example is built from them. A path such as ``/home/me/photo.png`` or
``../../secret.png``, or a symlink in the folder leading out, would make any of them read a file
of this machine and pass it on. So each reader asks here: the path must be as the store writes
it (relative, ``/``-separated, no empty, ``.`` or ``..`` part, no backslash or NUL) and, once
its symlinks are followed, still lie inside the episode folder. The viewer asks too, and
reports such a frame as a problem of its site instead of stopping (``llm_aai.view.site``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from llm_aai.logs.schema import SchemaError

__all__ = ["FrameOutside", "frame_file", "plain_relative"]


class FrameOutside(SchemaError):
    """A turn names a frame that is not a file of its episode folder (the message says why)."""


def plain_relative(path: str) -> bool:
    """Whether ``path`` is written as the store writes paths (relative, ``/``-separated).

    No empty, ``.`` or ``..`` part, no backslash or NUL, no leading ``/``: such a path cannot
    climb out of the folder it is joined to by itself (a symlink on the way still can: callers
    resolve it too). The viewer checks the paths it writes with it as well.
    """
    return (bool(path) and not path.startswith("/") and "\\" not in path and "\0" not in path
            and all(part not in ("", ".", "..") for part in path.split("/")))


def frame_file(episode_dir: Path, relative: Any) -> Path:
    """The path of the frame ``relative`` (from a turn's ``sent_images``) in ``episode_dir``.

    Raises:
        FrameOutside: ``relative`` is not a plain relative path, or it leads (through a
            symlink) outside ``episode_dir``.
    """
    if not isinstance(relative, str):
        raise FrameOutside(f"a frame path must be a string, got {type(relative).__name__}")
    if not plain_relative(relative):
        raise FrameOutside(f"frame path {relative!r} is not a relative path inside the episode "
                           "folder (no '..', '.', empty part, backslash or leading '/')")
    path = Path(episode_dir) / relative
    if not path.resolve().is_relative_to(Path(episode_dir).resolve()):
        raise FrameOutside(f"frame {relative!r} leads outside the episode folder (a symlink)")
    return path
