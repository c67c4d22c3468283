"""Where independent jobs run: in this process or in a pool of worker processes.

The audit (``llm_aai.audit``) and the variants' ``make`` (``llm_aai.variants.generate``)
hand their jobs to an ``Executor`` and record each result as it arrives; what is recorded is
what a rerun skips, so the executor itself keeps no state between runs. Executors are found
by name in ``EXECUTORS`` (``make_executor("local", workers=2)``), where a cluster executor
plugs in beside the local one.
"""

from llm_aai.execution.executor import (
    EXECUTORS,
    WORKER_DIED,
    Executor,
    InProcessExecutor,
    Job,
    Outcome,
    ProcessExecutor,
    make_executor,
)
from llm_aai.execution.signals import interrupt_on_sigterm

__all__ = ["EXECUTORS", "WORKER_DIED", "Executor", "InProcessExecutor", "Job", "Outcome",
           "ProcessExecutor", "interrupt_on_sigterm", "make_executor"]
