"""``variants make``'s task job with one task made to kill its worker (module level: spawned
workers import it by name)."""

from __future__ import annotations

import os
import signal

from llm_aai.variants.generate import _task_job

KILLER_TASK = "01-04-03"
"""The task whose job kills its worker outright, as a crash inside MuJoCo would."""


def task_or_death(task, *args):
    """``_task_job``, except that ``KILLER_TASK`` kills the process making it."""
    if task.task_id == KILLER_TASK:
        os.kill(os.getpid(), signal.SIGKILL)
    return _task_job(task, *args)
