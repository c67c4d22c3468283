"""One context across tasks (``--context across-tasks``): a trial's tasks in one conversation.

The paper gave every task its own conversation, so a model could not learn across the 40
tasks as the children did. In this mode the tasks of a trial are played one after another in
one conversation, in a stated order: the run's task order (the testbed's) or a shuffle drawn
from the run seed and the trial, so each trial of a run has its own order and a seed
reproduces all of them. Each task is still an episode of its own (own world, seed, log and
result); what the mode adds is that the model's context carries the earlier tasks, and that
each task's outcome is told to it before the next task starts.

This module holds the names and the order; the runner schedules the conversations and
rebuilds a conversation's history from the logs of its finished tasks.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence

__all__ = ["ACROSS_TASKS", "CONTEXTS", "ORDERS", "PER_TASK", "SHUFFLED", "TESTBED_ORDER",
           "conversation_id", "conversation_order"]

PER_TASK = "per-task"
"""The paper's context: a conversation per task."""
ACROSS_TASKS = "across-tasks"
"""One conversation per trial, over all its tasks."""
CONTEXTS = (PER_TASK, ACROSS_TASKS)

TESTBED_ORDER = "testbed"
"""The tasks in the run's order (the testbed's: level, then task number)."""
SHUFFLED = "shuffled"
"""The tasks shuffled, per trial, from the run seed."""
ORDERS = (TESTBED_ORDER, SHUFFLED)


def conversation_id(trial: int) -> str:
    """The name of trial ``trial``'s conversation, as episode results record it."""
    return f"trial-{trial}"


def conversation_order(task_ids: Sequence[str], order: str, *, seed: int,
                       trial: int) -> tuple[str, ...]:
    """The order in which trial ``trial`` plays ``task_ids`` in one conversation.

    Args:
        task_ids: the run's tasks, in the run's order.
        order: ``"testbed"`` keeps that order; ``"shuffled"`` shuffles it with a generator
            seeded by the run seed and the trial (stable across Python versions and
            processes, unlike ``hash``), so a resumed run finds the same order.
        seed: the run seed.
        trial: the trial (1-based).

    Raises:
        ValueError: an order that is not one of ``ORDERS``.

    """
    if order == TESTBED_ORDER:
        return tuple(task_ids)
    if order != SHUFFLED:
        raise ValueError(f"order must be one of {', '.join(ORDERS)}, got {order!r}")
    digest = hashlib.sha256(f"order:{seed}:{trial}".encode()).digest()
    shuffled = list(task_ids)
    random.Random(int.from_bytes(digest[:8], "little")).shuffle(shuffled)
    return tuple(shuffled)
