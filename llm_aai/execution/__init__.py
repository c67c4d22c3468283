"""Where independent jobs run: in this process, in a pool of worker processes, or on Ray.

The audit (``llm_aai.audit``) and the variants' ``make`` (``llm_aai.variants.generate``)
hand their jobs to an ``Executor`` and record each result as it arrives; what is recorded is
what a rerun skips, so the executor itself keeps no state between runs. Executors are found
by name in ``EXECUTORS`` (``make_executor("local", workers=2)``); ``ray`` runs them as Ray
tasks on a cluster (``make_executor("ray", 2, address)``, docs/ray.md).
"""

from llm_aai.execution.executor import (
    LOCAL_NODE,
    WORKER_DIED,
    WORKER_OUT_OF_MEMORY,
    Executor,
    InProcessExecutor,
    Job,
    Outcome,
    ProcessExecutor,
)
from llm_aai.execution.ray_executor import RayExecutor, RayUnavailable, RayUnreachable
from llm_aai.execution.registry import CHOICES, EXECUTORS, make_executor
from llm_aai.execution.signals import interrupt_on_sigterm

__all__ = ["CHOICES", "EXECUTORS", "LOCAL_NODE", "WORKER_DIED", "WORKER_OUT_OF_MEMORY", "Executor",
           "InProcessExecutor", "Job", "Outcome", "ProcessExecutor", "RayExecutor",
           "RayUnavailable", "RayUnreachable", "interrupt_on_sigterm", "make_executor"]
