"""Write the executable that ``animalai`` launches in the Unity player's place.

``mlagents_envs`` finds a build by its path (``env_utils.validate_environment_path``): it
removes ``.app``, ``.exe``, ``.x86_64`` and ``.x86`` *anywhere* in the path, then on Linux
tries ``<path>.x86_64``, ``<path>.x86`` and the bare path, and runs the file it finds. So the
launcher is ``DIR/AAI.x86_64`` (given with or without its extension, and found by
``animalai``'s own search when DIR is ``./env``), and DIR may not contain those substrings.
It is a shell script that runs this package's player with the Python that installed it.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

LAUNCHER_NAME = "AAI.x86_64"
_MANGLED = (".app", ".exe", ".x86_64", ".x86")
_WILDCARDS = ("*", "?", "[")
"""``glob`` pattern characters: ``mlagents_envs`` finds the build with ``glob.glob``, and a folder
named ``run[1]`` never matches itself."""


class LauncherError(ValueError):
    """The launcher cannot be written where asked."""


def launcher_text(python: str) -> str:
    """The launcher script for the interpreter ``python``."""
    return (
        "#!/bin/sh\n"
        "# llm-aai bridge: serves llm-aai's embedded simulator to animalai in place of the\n"
        "# Animal-AI Unity player. Written by `python -m llm_aai.bridge install`.\n"
        f"exec {shlex.quote(python)} -m llm_aai.bridge serve \"$@\"\n"
    )


def install(directory: Path, *, python: str | None = None, name: str = LAUNCHER_NAME) -> Path:
    """Write the launcher into ``directory`` (created if missing); return its path.

    Raises:
        LauncherError: the path contains a substring ``mlagents_envs`` strips from build paths,
            or the name does not end in ``.x86_64``.

    """
    directory = Path(directory).absolute()
    if not name.endswith(".x86_64") or any(part in name[:-len(".x86_64")] for part in _MANGLED):
        raise LauncherError(f"the launcher's name must end in .x86_64 and contain no other "
                            f"{'/'.join(_MANGLED)}: {name!r}")
    mangled = [part for part in _MANGLED if part in str(directory)]
    if mangled:
        raise LauncherError(
            f"{directory} contains {mangled[0]!r}, which mlagents_envs removes from any build "
            "path before looking for the file; choose a folder without "
            f"{', '.join(_MANGLED)} in its path")
    wildcards = sorted({c for c in str(directory) if c in _WILDCARDS})
    if wildcards:
        raise LauncherError(
            f"{directory} contains {' '.join(wildcards)}, which mlagents_envs reads as a "
            "file-name pattern when it looks for the build; choose a folder without "
            f"{' '.join(_WILDCARDS)} in its path")
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    temporary = path.with_name(f".{name}.tmp")
    temporary.write_text(launcher_text(python or sys.executable), encoding="utf-8")
    os.chmod(temporary, 0o755)
    os.replace(temporary, path)
    return path
