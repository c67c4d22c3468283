"""The oracle's plans as replies: what it sends, whoever drives the episode.

The runner's ``OracleAgent`` and the audit's ``play_oracle_episode`` both turn a plan into
replies here and play them through ``llm_aai.protocol.Episode``, so the two send the same
replies for the same plan and take the same steps.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from llm_aai.oracle.search import MAX_SCRIPT_STEPS, Plan, describe, to_script
from llm_aai.protocol.action_control import MAX_REPEAT, action_reply
from llm_aai.script import format_script

__all__ = ["frame_replies", "repeat_of", "script_reply"]

Action = tuple[int, int]


def script_reply(plan: Plan) -> tuple[str, list[Action] | None]:
    """The plan's first ``MAX_SCRIPT_STEPS`` steps as a Think/Go/Turn script, and the rest.

    Returns:
        ``(script text, the plan's remaining steps or None)``; the rest is the next search's
        hint.
    """
    chunk = plan.actions[:MAX_SCRIPT_STEPS]
    script = to_script(chunk, describe(plan, len(chunk)))
    return format_script(script), plan.actions[len(chunk):] or None


def repeat_of(actions: Sequence[Action]) -> int:
    """How many of the first action one frame reply repeats (1 to ``MAX_REPEAT``)."""
    repeat = 1
    while repeat < min(MAX_REPEAT, len(actions)) and actions[repeat] == actions[0]:
        repeat += 1
    return repeat


def frame_replies(actions: Sequence[Action]) -> Iterator[str]:
    """Action-control replies that take exactly ``actions``, each repeat as long as it may."""
    k = 0
    while k < len(actions):
        repeat = repeat_of(actions[k:k + MAX_REPEAT])
        yield action_reply(actions[k], repeat)
        k += repeat
