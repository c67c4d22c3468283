"""Commands printed for the user to run next, spelled with the Python that ran this one.

A hint saying ``python -m llm_aai.analyze ...`` fails with ``ModuleNotFoundError`` in a shell
whose ``python`` is not the virtual environment's (after ``make demo``, which never activates
``.venv``). The interpreter running now is the one that has llm_aai, so hints name it:
relative when it lies inside the current folder (``.venv/bin/python``), else in full.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path


def python_command() -> str:
    """This interpreter as a shell word: relative to the current folder when inside it."""
    executable = Path(sys.executable)
    try:
        shown = str(executable.relative_to(Path.cwd()))
    except ValueError:
        shown = str(executable)
    else:
        shown = shown if os.sep in shown else f".{os.sep}{shown}"
    return shlex.quote(shown)


def module_command(module: str, *args: object) -> str:
    """``<this python> -m <module> <args>``, each argument quoted for a POSIX shell."""
    return " ".join([python_command(), "-m", module, *(shlex.quote(str(a)) for a in args)])
