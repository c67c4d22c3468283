"""The one way the viewer writes: every file inside the site's folder, or none.

Runs are shared between labs, so what a run folder names (run ids, episode folders, frame
paths) is untrusted. Each write is given a path relative to the site and lands where that path
resolves, after its symlinks are followed; a path that is absolute, climbs with ``..`` or
resolves outside the site (through a symlink already in the site folder) is refused with the
file named, before any folder is made for it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from llm_aai.logs.frame_files import plain_relative

__all__ = ["SiteFiles", "SiteWriteError", "plain_relative"]


class SiteWriteError(OSError):
    """A file the site was to write would land outside the site's folder."""


class SiteFiles:
    """Writes files under ``root``, each checked to land inside it.

    Args:
        root: the site's folder (made if missing). It may itself be a symlink (the user
            named it); what is inside it may not lead out.

    """

    def __init__(self, root: Path):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self._real_root = self.root.resolve()

    def path(self, relative: str) -> Path:
        """Where ``relative`` is written, its folder made; for writers that want a path.

        Raises:
            SiteWriteError: ``relative`` is not plain, or resolves outside the site.

        """
        if not plain_relative(relative):
            raise SiteWriteError(f"{self.root / relative}: not a plain path inside the site "
                                 f"{self.root}; not written")
        real = (self._real_root / relative).resolve()
        if not real.is_relative_to(self._real_root) or real == self._real_root:
            raise SiteWriteError(f"{self.root / relative}: resolves to {real}, not inside the "
                                 f"site {self.root}; not written")
        real.parent.mkdir(parents=True, exist_ok=True)
        return real

    def write_text(self, relative: str, text: str) -> None:
        """Write ``text`` as UTF-8 at ``relative``."""
        self.path(relative).write_text(text, encoding="utf-8")

    def write_bytes(self, relative: str, data: bytes) -> None:
        """Write ``data`` at ``relative``."""
        self.path(relative).write_bytes(data)

    def copy(self, origin: Path, relative: str) -> bool:
        """Copy the file ``origin`` to ``relative`` unless a copy of its size is there.

        Returns:
            Whether it was copied.

        """
        destination = self.path(relative)
        if destination.is_file() and destination.stat().st_size == origin.stat().st_size:
            return False
        shutil.copyfile(origin, destination)
        return True
