"""Simulator backends behind one protocol (``Backend``): ``embedded`` (MuJoCo) and ``unity``.

The concrete backends import their heavy dependencies (MuJoCo, animalai) only when built.
"""

from llm_aai.env.backends.base import Backend, BackendStep, check_action

__all__ = ["Backend", "BackendStep", "check_action"]
