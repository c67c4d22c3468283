"""Stopping Ray tasks in flight without crossing their replies (Ctrl-C, SIGTERM of the driver).

Why not just ``ray.cancel``: in Ray 2.x's core the owner's reply handler for a finished task
first takes the task out of the submitter's table of executing tasks, then, outside that
table's lock, completes it in the task manager. A cancel that runs in between (on the
driver's own thread) finds the task still pending but no longer executing, so it fails it
itself as cancelled, which removes it from the task manager; the reply handler then aborts
the whole driver ("Tried to complete task that was not pending", a ``RAY_CHECK``). The
``force`` flag plays no part: both kinds of cancel take that path. Asking ``ray.wait``
which tasks are done does not close the window either, since the handler stores the result
(making the reference ready) before it completes the task.

So a task here returns only with leave: it runs the job, then asks a ``StopGate`` actor on
the driver's node whether it may return. The driver, stopping, refuses in one call every
task that has not been given leave; the actor answers each question in turn, so a task has
either been given leave (its reply comes through Ray's normal path and is never cancelled)
or will be refused (it waits at the gate, sends no reply of its own, and is ended by a
forced cancel, whose only reply is its worker's death or "cancelled before it ran", both of
which Ray's owner takes without that check). A task that has not started yet is taken off
Ray's queue by the same cancel; one the cancel overtook on its way to a worker is cancelled
again (``stop_tasks``).

The question is asked from a thread of the task's own, never its main thread: Ray lends the
CPU of a task blocked in ``ray.get`` on its main thread to the next task queued on the node,
which then starts at once, in a new worker process when none is idle (each importing the
package), for an answer that takes milliseconds. Measured on the 40-task audit on 2 CPUs:
asked from the main thread, 3 or 4 worker processes played its episodes, which spent 6.6 to
6.8 s more wall time than CPU time in all (waiting for a core); asked from a thread, 2
played them, and 1.4 to 1.7 s (the local pool: 0.5 to 0.8 s).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

__all__ = ["GATE_TIMEOUT_S", "RECANCEL_S", "SETTLE_S", "StopGate", "gated_call", "start_gate",
           "stop_tasks"]

GATE_TIMEOUT_S = 30.0
"""How long the driver waits for the gate's answer before it gives up cancelling (its exit
then ends the tasks: Ray ends a departed driver's workers)."""

SETTLE_S = 15.0
"""How long a stop waits at most for the refused tasks to be ended (normally well under a
second: the time to end their workers)."""

RECANCEL_S = 1.0
"""How often a refused task that has not settled is cancelled again."""


class StopGate:
    """The actor that gives each task leave to return, until the driver refuses it.

    One call at a time (a plain actor), so leave and refusal never cross.
    """

    def __init__(self) -> None:
        self._granted: set[str] = set()
        self._refused: set[str] = set()

    def may_return(self, token: str) -> bool:
        """Whether the task ``token`` may send its reply (False once it was refused)."""
        if token in self._refused:
            return False
        self._granted.add(token)
        return True

    def refuse(self, tokens: list[str]) -> list[str]:
        """Refuse the tasks ``tokens`` that have no leave yet; those (safe to cancel)."""
        refused = [token for token in tokens if token not in self._granted]
        self._refused.update(refused)
        return refused


def start_gate(ray: Any) -> Any:
    """A ``StopGate`` on this (the driver's) node: no CPU, never restarted, no name."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False)
    return ray.remote(StopGate).options(num_cpus=0, max_restarts=0,
                                        scheduling_strategy=here).remote()


def gated_call(gate: Any, token: str, function: Callable[..., Any], args: tuple) -> Any:
    """Run ``function(*args)`` on a worker, then return (or raise) only with the gate's leave.

    Refused, the task waits until its cancel ends the worker (or the driver's exit does).
    A gate that cannot answer (it ended with the driver's services) gives leave: nobody is
    cancelling then.
    """
    try:
        return function(*args)
    finally:
        if not _may_return(gate, token):
            _wait_to_be_ended()


def _may_return(gate: Any, token: str) -> bool:
    """The gate's answer, asked from another thread so that the task keeps its CPU."""
    with ThreadPoolExecutor(1, thread_name_prefix="stop-gate") as asker:
        return asker.submit(_ask_gate, gate, token).result()


def _ask_gate(gate: Any, token: str) -> bool:
    import ray

    try:
        return bool(ray.get(gate.may_return.remote(token)))
    except ray.exceptions.RayActorError:
        return True


def _wait_to_be_ended() -> None:
    while True:
        time.sleep(60.0)


def stop_tasks(ray: Any, gate: Any, tasks: Mapping[str, Any]) -> list[Any]:
    """End the tasks in flight, ``{token: object ref}``, without crossing any reply.

    Those the gate gave leave are left to finish (they have; only their reply is on its
    way); the rest are refused and cancelled with force (their workers are ended). A cancel
    can miss a task that had been handed to its worker but not started there (the cancel
    overtook it); it then starts, works, and waits at the gate. So the refused tasks are
    cancelled again, once a second, until each has settled or ``SETTLE_S`` has passed: a
    refused task sends no reply of its own, so cancelling it again is always safe. A gate
    that does not answer within ``GATE_TIMEOUT_S`` cancels nothing: the tasks then end with
    the driver's connection.

    Returns:
        The refused tasks' references not settled within ``SETTLE_S`` (none, normally).
    """
    if not tasks:
        return []
    try:
        refused = ray.get(gate.refuse.remote(list(tasks)), timeout=GATE_TIMEOUT_S)
    except (ray.exceptions.RayActorError, ray.exceptions.GetTimeoutError):
        return []
    unsettled = [tasks[token] for token in refused]
    deadline = time.monotonic() + SETTLE_S
    while unsettled:
        for ref in unsettled:
            ray.cancel(ref, force=True)
        left = deadline - time.monotonic()
        if left <= 0:
            break
        _, unsettled = ray.wait(unsettled, num_returns=len(unsettled),
                                timeout=min(RECANCEL_S, left))
    return unsettled
