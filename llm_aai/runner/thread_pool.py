"""The thread pool a suite's episodes run on, behind an interface a distributed engine can replace.

The suite hands an executor independent jobs and consumes results as they complete; nothing
about the episode protocol leaks in here. A Ray executor, for instance, would implement
``map_unordered`` with ``ray.remote`` tasks and ``ray.wait`` and need no other change.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Protocol, TypeVar

J = TypeVar("J")
R = TypeVar("R")


class Executor(Protocol):
    """Runs ``fn`` over jobs, yielding results in completion order."""

    def map_unordered(
        self, fn: Callable[[J], R], jobs: Iterable[J], *, stop: Callable[[], bool] = lambda: False,
        on_abort: Callable[[], None] = lambda: None,
    ) -> Iterator[R]:
        """Yield ``fn(job)`` as each finishes; stop submitting new jobs once ``stop()`` is true.

        If the consumer is interrupted (an exception, Ctrl-C), call ``on_abort`` so that jobs
        in flight can end early, drop the jobs not started, and re-raise.
        """
        ...


class ThreadExecutor:
    """Local threads: right for LLM-bound runs (waiting on HTTP) and fine for the simulator.

    MuJoCo releases the GIL while stepping and rendering, and each worker thread keeps its own
    environment (and GL context), so simulation work overlaps too.
    """

    def __init__(self, workers: int):
        if workers < 1:
            raise ValueError(f"concurrency must be at least 1, got {workers}")
        self.workers = workers

    def map_unordered(
        self, fn: Callable[[J], R], jobs: Iterable[J], *, stop: Callable[[], bool] = lambda: False,
        on_abort: Callable[[], None] = lambda: None,
    ) -> Iterator[R]:
        """Keep at most ``workers`` jobs in flight; yield results as they complete.

        Threads cannot be killed: on an interruption the jobs in flight are asked to end
        (``on_abort``) and waited for, which takes as long as their current step.
        """
        pending_jobs = iter(jobs)
        with ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="episode") as pool:
            in_flight: set[Future[R]] = set()

            def refill() -> None:
                while len(in_flight) < self.workers and not stop():
                    job = next(pending_jobs, None)
                    if job is None:
                        return
                    in_flight.add(pool.submit(fn, job))

            try:
                refill()
                while in_flight:
                    done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
                    for future in done:
                        in_flight.discard(future)
                        yield future.result()
                    refill()
            except BaseException:
                on_abort()
                raise
