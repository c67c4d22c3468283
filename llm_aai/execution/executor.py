"""Executors: run independent jobs and hand back each outcome as it finishes.

The contract every executor keeps (the audit and the variants' ``make`` rely on it):

* ``run(jobs)`` yields one ``Outcome`` per job, in the order they finish. A job that raises
  becomes an outcome with ``crash`` set (its exception in one line); a job that kills its
  worker (a segmentation fault inside MuJoCo, the OOM killer) is retried alone once, so the
  blame falls on the job that did it, and then recorded as crashed (``WORKER_DIED``): one
  bad task never stops the rest and is never retried for ever.
* An interrupt (``KeyboardInterrupt``, which ``interrupt_on_sigterm`` makes of SIGTERM) while
  jobs run ends the workers at once and propagates; nothing is lost that the caller recorded,
  so a rerun that skips the recorded jobs resumes the work.
* A job is a module-level function and picklable arguments, so any executor can ship it to
  another process or machine: ``ProcessExecutor`` spawns local workers; a cluster executor
  (``llm_aai.execution.ray_executor``) is one more class with ``run`` and ``close`` and one
  more entry in ``llm_aai.execution.registry.EXECUTORS``.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import socket
import threading
import time
from collections.abc import Callable, Generator, Hashable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = ["LOCAL_NODE", "WORKER_DIED", "WORKER_OUT_OF_MEMORY", "Executor",
           "InProcessExecutor", "Job", "Outcome", "ProcessExecutor", "describe_error"]

WORKER_DIED = "the worker process died"
"""The crash of a job that killed its worker process, even when it ran alone."""

WORKER_OUT_OF_MEMORY = ("Ray's memory monitor killed the worker process "
                        "(its node ran low on memory)")
"""The crash of a Ray job whose worker the memory monitor killed once its retries for that
were spent (Ray's ``task_oom_retries``; unlimited unless the cluster sets it)."""


@dataclass(frozen=True)
class Job:
    """One unit of work: ``function(*args)``.

    Attributes:
        key: what the caller knows the job by (a task and seed); never sent to a worker.
        function: a module-level function (a worker imports it by its name).
        args: its arguments, picklable.
    """

    key: Hashable
    function: Callable[..., Any]
    args: tuple = ()


@dataclass(frozen=True)
class Outcome:
    """How a job ended.

    Attributes:
        job: the job.
        result: what its function returned (None if it crashed).
        crash: why it has no result (its exception, or ``WORKER_DIED``); None if it finished.
        node_id: the cluster node it ran on (``LOCAL_NODE`` off a cluster); empty if crashed.
        host: the machine it ran on; empty if it crashed.
    """

    job: Job
    result: Any = None
    crash: str | None = None
    node_id: str = ""
    host: str = ""

    @property
    def crashed(self) -> bool:
        """The job gave no result."""
        return self.crash is not None


class Executor(Protocol):
    """Runs jobs; used as a context manager so that its workers end with the block."""

    def run(self, jobs: Iterable[Job]) -> Iterator[Outcome]:
        """Each job's outcome as it finishes (see the module doc)."""
        ...

    def close(self) -> None:
        """Release the workers (after the last ``run``)."""
        ...

    def __enter__(self) -> Executor: ...

    def __exit__(self, *exc_info: object) -> None: ...


LOCAL_NODE = "local"
"""The node id of a job run by a local executor (no cluster, so no node id of Ray's)."""


def _here(job: Job, result: Any) -> Outcome:
    """A finished job's outcome, placed on this machine."""
    return Outcome(job, result, node_id=LOCAL_NODE, host=socket.gethostname())


def describe_error(error: BaseException) -> str:
    """An exception in one line: its type and message."""
    return f"{type(error).__name__}: {error}".replace("\n", " ")


class InProcessExecutor:
    """Jobs one after another in this process: no workers to start, no isolation.

    A job that kills the process kills the caller with it; for one worker's worth of jobs
    whose functions catch their own failures (a cheap ``make`` of one task) that is the
    right trade.
    """

    def __init__(self, workers: int = 1) -> None:
        del workers  # one, always

    def run(self, jobs: Iterable[Job]) -> Iterator[Outcome]:
        """Run each job now, in order."""
        for job in jobs:
            try:
                result = job.function(*job.args)
            except Exception as error:  # a job's failure is its outcome, as in a worker
                yield Outcome(job, crash=describe_error(error))
            else:
                yield _here(job, result)

    def close(self) -> None:
        """Nothing to release."""

    def __enter__(self) -> InProcessExecutor:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class ProcessExecutor:
    """Jobs in ``workers`` spawned processes of this machine, a few in flight per worker.

    Workers are spawned, not forked: a fork of a process with threads (a test runner, a
    progress bar) can copy a lock another thread holds, and the worker then waits for ever.
    The pool lives across ``run`` calls (the audit's second pass reuses it) and is rebuilt
    after a worker dies.

    Args:
        workers: worker processes (at least 1).
        in_flight: jobs handed out per worker at a time; few, so that a dying worker takes
            few jobs with it to be replayed alone.
    """

    def __init__(self, workers: int = 1, *, in_flight: int = 2) -> None:
        self.workers = max(1, int(workers))
        self.in_flight = max(1, int(in_flight))
        self._pool: ProcessPoolExecutor | None = None

    def run(self, jobs: Iterable[Job]) -> Iterator[Outcome]:
        """Each job's outcome as it finishes; a worker's death costs one retry, alone."""
        queue = list(jobs)
        try:
            while queue:
                queue, suspects = yield from self._round(queue, self.workers * self.in_flight)
                for job in suspects:  # alone, so a crash is pinned on the job that made it
                    _, again = yield from self._round([job], 1)
                    for culprit in again:
                        yield Outcome(culprit, crash=WORKER_DIED)
        except BaseException:  # an interrupt: end the workers before they do any more
            self.abandon()
            raise

    def _round(self, queue: list[Job], limit: int) -> Generator[Outcome, None,
                                                                   tuple[list[Job], list[Job]]]:
        """Run ``queue`` with at most ``limit`` jobs in flight, yielding outcomes.

        Returns:
            (jobs not started, jobs in flight when a worker died); both empty if none died.
        """
        pool = self._open()
        pending: dict[Future, Job] = {}
        waiting = iter(queue)

        def submit() -> None:
            job = next(waiting, None)
            if job is not None:
                pending[pool.submit(job.function, *job.args)] = job

        for _ in range(limit):
            submit()
        while pending:
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                job = pending.pop(future)
                try:
                    outcome = _here(job, future.result())
                except BrokenProcessPool:
                    # a worker died: any job in flight may be the one that killed it
                    self._discard()
                    return list(waiting), [job, *pending.values()]
                except Exception as error:
                    outcome = Outcome(job, crash=describe_error(error))
                yield outcome
                submit()
        return [], []

    def _open(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                max_workers=self.workers, initializer=_worker_start, initargs=(os.getpid(),),
                mp_context=multiprocessing.get_context("spawn"))
        return self._pool

    def _discard(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    def abandon(self) -> None:
        """End the workers now, their jobs unfinished (an interrupt)."""
        if self._pool is None:
            return
        # the pool's own processes (a private attribute, stable since Python 3.8); the
        # alternative, multiprocessing.active_children(), would end every child of this process
        for process in list((getattr(self._pool, "_processes", None) or {}).values()):
            process.terminate()
        self._discard()

    def close(self) -> None:
        """Wait for the workers to exit (no job is running after ``run`` has returned)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    def __enter__(self) -> ProcessExecutor:
        return self

    def __exit__(self, exc_type: object, *exc_info: object) -> None:
        if exc_type is not None:
            self.abandon()
        else:
            self.close()


def _worker_start(parent_pid: int) -> None:
    """A worker leaves interrupts to the parent and ends when the parent is gone.

    Ctrl-C reaches the whole process group: the parent alone handles it (and ends the
    workers). A parent killed outright (SIGKILL) cannot end them, so each worker watches for
    it and exits, rather than go on writing into a folder a rerun is resuming.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()
