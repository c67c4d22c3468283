"""Older ``animalai`` clients, each in a venv of its own, built once and cached.

The paper's harness pins animalai 4.1.0 on mlagents-envs 0.30.0 (protobuf 3.20.3), which
cannot share a venv with 6.2.0 (protobuf 7). Their wheels declare Python < 3.10 but run on
3.11, so they are installed with ``--no-deps --ignore-requires-python`` and the smallest set of
their imports: mlagents_envs 0.30 imports grpc (which imports typing_extensions), protobuf,
numpy and PIL; nothing else on the ``AnimalAIEnvironment`` path (its gym, pettingzoo,
cloudpickle, yaml and filelock requirements serve other modules).

A venv lives under ``$XDG_CACHE_HOME/llm-aai/animalai-clients/`` (``~/.cache`` without it),
named by its requirements and the Python version, with a marker written last, so a clean
clone builds it on first use (pip's own cache keeps the downloads) and later runs reuse it;
a lock keeps parallel test processes from building one venv twice.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

from filelock import FileLock

COMMON = ("protobuf==3.20.3", "numpy==1.26.4", "grpcio==1.85.3", "pillow==13.0.0",
          "typing_extensions==4.16.0")
"""What mlagents-envs 0.30.0 imports, at versions with Python 3.11 wheels."""

CLIENTS = {
    "animalai-4.1.0": ("animalai==4.1.0", "mlagents-envs==0.30.0", *COMMON),
    "animalai-3.0.5": ("animalai==3.0.5", "mlagents-envs==0.30.0", *COMMON),
}
"""Client generation -> pinned requirements. 3.0.x pins the ``mlagents`` trainer 0.30.0,
whose only part the client uses is mlagents-envs 0.30.0."""

READY = ".complete"
BUILD_TIMEOUT = 600


def cache_root() -> Path:
    """Where client venvs are kept between runs."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "llm-aai" / "animalai-clients"


def client_python(name: str) -> Path:
    """The interpreter of the venv for client ``name`` (built on first use)."""
    requirements = CLIENTS[name]
    key = hashlib.sha256("\n".join(requirements).encode()).hexdigest()[:10]
    folder = cache_root() / f"{name}-py{sys.version_info[0]}{sys.version_info[1]}-{key}"
    python = folder / "bin" / "python"
    if (folder / READY).exists():
        return python
    folder.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(folder) + ".lock", timeout=BUILD_TIMEOUT):
        if (folder / READY).exists():
            return python
        shutil.rmtree(folder, ignore_errors=True)  # a build that was interrupted
        base = getattr(sys, "_base_executable", sys.executable)
        subprocess.run([base, "-m", "venv", "--without-pip", str(folder)], check=True,
                       timeout=BUILD_TIMEOUT)
        # this interpreter's pip installs into the new venv (no ensurepip: seconds saved)
        subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install",
                        "--quiet", "--no-deps", "--ignore-requires-python",
                        "--disable-pip-version-check", *requirements],
                       check=True, timeout=BUILD_TIMEOUT)
        (folder / READY).write_text("\n".join(requirements) + "\n", encoding="utf-8")
    return python
