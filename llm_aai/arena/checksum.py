"""The sha256 of an arena file: the one checksum the catalog, manifests and checks compare.

The testbed catalog pins each file by it, a run's manifest records it for every arena the run
played, and resuming, re-simulating and loading a worked example refuse a file whose checksum
differs. Computed here only, so that every one of them hashes the same bytes the same way.
"""

from __future__ import annotations

import hashlib
from functools import cache
from importlib import resources
from pathlib import Path

_CHUNK = 64 * 1024


def file_sha256(path: str | Path) -> str:
    """Return the hex sha256 of a file's bytes, read in chunks (a testbed file or a frame)."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(_CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


@cache
def pinned_checksums() -> dict[str, str]:
    """Map each testbed file name to its sha256 (hex) at the pinned commit (package data)."""
    text = resources.files("llm_aai").joinpath("data", "competition.sha256").read_text(
        encoding="utf-8")
    result = {}
    for line in text.splitlines():
        if line.strip():
            digest, name = line.split()
            result[name.lstrip("*")] = digest
    return result
