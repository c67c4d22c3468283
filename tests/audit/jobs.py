"""The audit's episode with one task made to kill its worker (module level: spawned workers
import it by name)."""

from __future__ import annotations

import os
import signal

from llm_aai.audit.run import audit_episode

KILLER_TASK = "01-01-01"
"""The task whose episode kills its worker outright, as a crash inside MuJoCo would."""


def episode_or_death(task_id: str, *args):
    """``audit_episode``, except that ``KILLER_TASK`` kills the process playing it."""
    if task_id == KILLER_TASK:
        os.kill(os.getpid(), signal.SIGKILL)
    return audit_episode(task_id, *args)
