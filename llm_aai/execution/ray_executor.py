"""The Ray executor: the same jobs as ``ProcessExecutor``, as Ray tasks across a cluster.

Ray (an optional extra, ``pip install 'llm-aai[ray]'``) is imported only when this executor
is built, so the package works without it and ``--executor ray`` says how to install it.

The contract is the one in ``llm_aai.execution.executor``, held across machines:

* The driver alone records results: a worker returns its job's result and where it ran
  (Ray's node id and the host), the caller writes it; no worker touches the run directory.
* A worker lost with its node (its raylet killed, the machine gone) is a system failure to
  Ray, which resubmits the task elsewhere; the driver sees one result per job, so a lost
  node costs no job and duplicates none. A job that kills its worker itself (a crash inside
  MuJoCo) is retried the same way, ``RETRIES`` times at most, and then recorded as
  ``WORKER_DIED``: never retried for ever. A job that raises is not retried (Ray does not
  retry application errors unless told to): its exception is its outcome, as locally.
* An interrupt ends the tasks in flight (their workers with them) and propagates; what the
  caller recorded is what a rerun skips. It never cancels a task whose reply may be on its
  way, which can abort the driver inside Ray's core (``llm_aai.execution.ray_stop``).

Tasks, not an actor pool of warm simulators: an audit episode or a variant check builds its
world from the arena file in well under its playing time (docs/ray.md has the figures), so a
stateless task, which Ray can place and retry anywhere, costs no more than a warm actor and
keeps the fault story simple.
"""

from __future__ import annotations

import signal
import socket
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from llm_aai.execution.executor import (
    WORKER_DIED,
    WORKER_OUT_OF_MEMORY,
    Job,
    Outcome,
    describe_error,
)
from llm_aai.execution.ray_address import (
    CONNECT_TIMEOUT_S,
    INSTALL_HINT,
    RayUnavailable,
    RayUnreachable,
    check_address,
    import_ray,
)
from llm_aai.execution.ray_local import start_local
from llm_aai.execution.ray_stop import gated_call, start_gate, stop_tasks

__all__ = ["CONNECT_TIMEOUT_S", "INSTALL_HINT", "JOB_CPUS", "RETRIES", "RayExecutor",
           "RayUnavailable", "RayUnreachable", "check_address", "connect", "import_ray",
           "lost_worker"]

RETRIES = 2
"""How often Ray replays a task whose worker died (a node lost, or the job's own crash)."""

JOB_CPUS = 1.0
"""The CPUs a job's task reserves. An audit episode or a variant check simulates flat out
(the oracle's search, 1.3 CPU s per audit episode on average), so one job per CPU keeps the
cluster busy without oversubscribing it; a run's model episodes, which mostly wait on their
model, reserve a fraction instead (``--ray-episode-cpus``, ``llm_aai.runner.ray_suite``)."""


def lost_worker(ray: Any, error: BaseException) -> str | None:
    """Why a task's worker was lost, if ``error`` (from ``ray.get``) says it was; else None.

    Ray reports a lost worker, rather than a job that failed, in several exceptions: a
    worker that crashed or whose node died (after ``RETRIES`` replays), its result lost with
    its node, its raylet gone, and a worker its node's memory monitor killed. The last is
    replayed by Ray's own count (``task_oom_retries``, unlimited by default), so it reaches
    the driver only on a cluster that bounds it; it is told apart, as more memory is then
    the remedy, not a fix in the job.
    """
    exceptions = ray.exceptions
    if isinstance(error, exceptions.OutOfMemoryError):
        return WORKER_OUT_OF_MEMORY
    if isinstance(error, (exceptions.WorkerCrashedError, exceptions.NodeDiedError,
                          exceptions.ObjectLostError, exceptions.LocalRayletDiedError)):
        return WORKER_DIED
    return None


def connect(address: str | None, cpus: int) -> bool:
    """Join the Ray cluster at ``address``, or start a Ray here with ``cpus`` CPUs (None).

    A Ray started here listens on loopback only, with no dashboard: it serves this command,
    and anyone else who reached it could run code as this user
    (``llm_aai.execution.ray_local``). Nothing is done if this process has joined one
    already. The signal handlers are kept: Ray's core installs its own for SIGTERM when it
    starts, which aborts the process (exit -6) instead of letting the command stop cleanly
    and resumably as it does locally.

    Returns:
        Whether a connection was made here (the caller then ends it with ``ray.shutdown``).

    Raises:
        RayUnavailable: Ray is not installed.
        RayUnreachable: ``auto`` finds no cluster, or nothing that speaks gRPC answers
            at ``address`` (``llm_aai.execution.ray_address.check_address``).
        NotLoopback: the Ray started here did not take a loopback address (shut down).
    """
    ray = import_ray()
    if ray.is_initialized():
        return False
    check_address(address)
    in_main = threading.current_thread() is threading.main_thread()
    kept = {signum: signal.getsignal(signum) for signum in _KEPT_SIGNALS} if in_main else {}
    try:
        if address is None:  # "local": a new Ray here, never a cluster found running
            start_local(ray, cpus, include_dashboard=False, log_to_driver=False,
                        configure_logging=False)
        else:
            ray.init(address=address, log_to_driver=False, configure_logging=False)
    finally:
        for signum, handler in kept.items():
            if handler is not None:
                signal.signal(signum, handler)
    return True


_KEPT_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGINT", "SIGHUP")
                      if hasattr(signal, name))
"""The signals a command answers itself (a clean, resumable stop)."""


def _placed(gate: Any, token: str, function: Callable[..., Any],
            args: tuple) -> tuple[Any, str, str]:
    """Run one job on a Ray worker: its result, the node id and the host it ran on.

    It returns only with the stop gate's leave (``llm_aai.execution.ray_stop``).
    """
    return gated_call(gate, token, _run_placed, (function, args))


def _run_placed(function: Callable[..., Any], args: tuple) -> tuple[Any, str, str]:
    import ray

    result = function(*args)
    return result, ray.get_runtime_context().get_node_id(), socket.gethostname()


class RayExecutor:
    """Jobs as Ray tasks on a cluster (``address``) or on a Ray started here (no address).

    Args:
        workers: jobs in flight at once on a Ray started here (its CPUs); on a cluster the
            jobs in flight are ``workers`` times ``in_flight`` too, so the driver's memory
            for pending results stays bounded.
        address: a running cluster (``ray://host:10001``, ``host:6379`` or ``auto``); None
            starts a local Ray with ``workers`` CPUs, shut down again by ``close``.
        in_flight: tasks submitted per worker at a time.

    Raises:
        RayUnavailable: Ray is not installed.
    """

    def __init__(self, workers: int = 1, address: str | None = None, *,
                 in_flight: int = 2) -> None:
        self._ray = import_ray()
        self.workers = max(1, int(workers))
        self.in_flight = max(1, int(in_flight))
        self._started_here = connect(address, self.workers)
        self._gate: Any = start_gate(self._ray)
        self._remote = self._ray.remote(num_cpus=JOB_CPUS, max_retries=RETRIES)(_placed)

    def run(self, jobs: Iterable[Job]) -> Iterator[Outcome]:
        """Each job's outcome as it finishes (see the module doc)."""
        ray = self._ray
        waiting = iter(jobs)
        pending: dict[Any, Job] = {}
        tokens: dict[Any, str] = {}

        def submit() -> None:
            job = next(waiting, None)
            if job is not None:
                token = uuid.uuid4().hex
                ref = self._remote.remote(self._gate, token, job.function, job.args)
                pending[ref], tokens[ref] = job, token

        try:
            for _ in range(self.workers * self.in_flight):
                submit()
            while pending:
                finished, _ = ray.wait(list(pending), num_returns=1)
                for ref in finished:
                    job = pending.pop(ref)
                    del tokens[ref]
                    yield self._outcome(job, ref)
                    submit()
        except BaseException:  # an interrupt: stop the tasks before they do any more
            stop_tasks(ray, self._gate, {tokens[ref]: ref for ref in pending})
            raise

    def _outcome(self, job: Job, ref: Any) -> Outcome:
        try:
            result, node_id, host = self._ray.get(ref)
        except self._ray.exceptions.RayTaskError as error:
            cause = error.as_instanceof_cause()
            return Outcome(job, crash=describe_error(getattr(cause, "cause", None) or cause))
        except self._ray.exceptions.RayError as error:
            lost = lost_worker(self._ray, error)
            if lost is None:
                raise
            return Outcome(job, crash=lost)
        return Outcome(job, result, node_id=node_id, host=host)

    def close(self) -> None:
        """Shut down the Ray this executor started; on a cluster it joined, end its gate."""
        if self._started_here and self._ray.is_initialized():
            self._ray.shutdown()
        elif self._gate is not None and self._ray.is_initialized():
            self._ray.kill(self._gate)
        self._gate = None
        self._started_here = False

    def __enter__(self) -> RayExecutor:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
