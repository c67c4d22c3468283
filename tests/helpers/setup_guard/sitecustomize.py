"""Start-up hook of the README examples' subprocesses (``tests/test_readme_examples.py``).

The test environment holds every lock, so an example that needs ``make animalai`` would run
there even if the README only said ``make demo``. Python imports ``sitecustomize`` at start-up
from the first folder of ``sys.path`` that has one; with this folder first on ``PYTHONPATH``
and ``LLM_AAI_TEST_SETUP_GUARD`` naming a JSON file (``{"step": ..., "modules": [...]}``),
the listed top-level modules (those of packages the step does not install) cannot be
imported, as in an environment the step alone built. Child processes inherit both variables.
"""

from __future__ import annotations

import importlib.abc
import json
import os
import sys

GUARD = "LLM_AAI_TEST_SETUP_GUARD"


class NotInstalledBy(importlib.abc.MetaPathFinder):
    """Refuses the modules a set-up step does not install, naming the step."""

    def __init__(self, step: str, modules: frozenset[str]):
        self.step = step
        self.modules = modules

    def find_spec(self, fullname, path=None, target=None):
        top = fullname.partition(".")[0]
        if top in self.modules:
            raise ModuleNotFoundError(f"No module named {top!r} ({self.step} does not install "
                                      "the package that has it)", name=top)
        return None


def install() -> None:
    if not os.environ.get(GUARD):
        return
    with open(os.environ[GUARD], encoding="utf-8") as handle:
        guard = json.load(handle)
    sys.meta_path.insert(0, NotInstalledBy(guard["step"], frozenset(guard["modules"])))


install()
