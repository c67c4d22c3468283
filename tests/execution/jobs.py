"""Job functions for the executor tests (module level: spawned workers import them by name)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from llm_aai.execution.ray_stop import StopGate


def square(n: int) -> int:
    """A job that finishes."""
    return n * n


def fail(message: str) -> None:
    """A job that raises."""
    raise RuntimeError(message)


def die(tally: str) -> None:
    """A job that kills its worker outright (as a crash inside MuJoCo does), counting its runs."""
    with Path(tally).open("a") as handle:
        handle.write("run\n")
    os.kill(os.getpid(), signal.SIGKILL)


def sleep_then(seconds: float, pid_file: str) -> float:
    """A job that writes its worker's pid and takes a while."""
    Path(pid_file).write_text(str(os.getpid()))
    time.sleep(seconds)
    return seconds


def nap(seconds: float) -> float:
    """A job that takes a while and touches nothing (many of them spread over the nodes)."""
    time.sleep(seconds)
    return seconds


def nap_longer_on(node_id: str, there: float, elsewhere: float) -> float:
    """A nap of ``there`` seconds on the node ``node_id`` and ``elsewhere`` on any other, so
    that a test knows that node is still busy when the first other job ends."""
    import ray

    seconds = there if ray.get_runtime_context().get_node_id() == node_id else elsewhere
    time.sleep(seconds)
    return seconds


def nap_then_mark(seconds: float, mark: str) -> str:
    """A job that takes a while, then leaves a file: it exists only if the job was not stopped."""
    time.sleep(seconds)
    Path(mark).write_text("finished")
    return mark


def assigned_cpus() -> float:
    """A job that says how many CPUs Ray reserved for it (run on a Ray worker)."""
    import ray

    return ray.get_runtime_context().get_assigned_resources().get("CPU", 0.0)


class SlowGate(StopGate):
    """A stop gate that takes ``seconds`` to answer each task, so that a test can see what a
    node does while a task waits for its leave."""

    def __init__(self, seconds: float) -> None:
        super().__init__()
        self.seconds = seconds

    def may_return(self, token: str) -> bool:
        """The gate's answer, late."""
        time.sleep(self.seconds)
        return super().may_return(token)


def when() -> float:
    """A job that says when it started (the epoch's seconds)."""
    return time.time()


def hog(megabytes: int, seconds: float) -> int:
    """A job that holds ``megabytes`` of touched memory for ``seconds`` (for a memory monitor
    to kill it)."""
    import numpy as np

    held = np.ones(megabytes * 1024 * 1024 // 8)
    time.sleep(seconds)
    return int(held.size)
