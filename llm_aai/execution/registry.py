"""Executors by name, so that a command's ``--executor`` picks one without an if per name."""

from __future__ import annotations

from collections.abc import Callable

from llm_aai.execution.executor import Executor, InProcessExecutor, ProcessExecutor
from llm_aai.execution.ray_executor import RayExecutor

__all__ = ["CHOICES", "EXECUTORS", "make_executor"]


def _on_this_machine(kind: Callable[[int], Executor]) -> Callable[[int, str | None], Executor]:
    """A factory for a local executor, which has no cluster address to take."""

    def factory(workers: int, address: str | None) -> Executor:
        if address is not None:
            raise ValueError("a cluster address (--ray-address) needs --executor ray")
        return kind(workers)

    return factory


EXECUTORS: dict[str, Callable[[int, str | None], Executor]] = {
    "local": _on_this_machine(ProcessExecutor),
    "in-process": _on_this_machine(InProcessExecutor),
    "ray": RayExecutor,  # imports Ray (an optional extra) only when built
}
"""Executors by name: ``factory(workers, address) -> Executor`` (address: a cluster's)."""

CHOICES = ("local", "ray")
"""The executors a command offers its user (``--executor``)."""


def make_executor(name: str, workers: int = 1, address: str | None = None) -> Executor:
    """The executor registered as ``name``, with ``workers`` workers.

    Args:
        name: a key of ``EXECUTORS``.
        workers: jobs at once (worker processes locally, CPUs of a Ray started here).
        address: the Ray cluster to join (``ray`` only); None starts one on this machine.

    Raises:
        ValueError: no executor of that name, or an address for a local executor.
        RayUnavailable: ``ray`` chosen and Ray not installed (the message says how to).
    """
    try:
        factory = EXECUTORS[name]
    except KeyError:
        raise ValueError(f"unknown executor {name!r}; the executors are "
                         f"{', '.join(EXECUTORS)}") from None
    return factory(workers, address)
