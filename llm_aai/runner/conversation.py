"""The conversations of ``--context across-tasks``: which tasks, in which order, with what history.

A trial's tasks are played one after another in one conversation
(``llm_aai.protocol.across_tasks``). Each task is still an episode with its own log and
result; what a task needs from the ones before it is read back from their logs, in the run
that played them as on resume alike, so a resumed conversation sends the model exactly what an
uninterrupted one would have:

* the history: every exchange of the earlier tasks (the text and frame files sent, the reply);
* the opening line: the last task's outcome (its end message and whether it passed), sent
  before the new task's first pictures.

Tasks of one conversation run in order, never at once; conversations (trials) run in parallel.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from llm_aai.agents.base import PriorTurn, TurnInput
from llm_aai.logs.frame_files import frame_file
from llm_aai.logs.schema import SchemaError
from llm_aai.logs.store import read_result, read_turns
from llm_aai.prompts import TurnMessages
from llm_aai.prompts.modes import next_level_line
from llm_aai.protocol.across_tasks import conversation_id, conversation_order
from llm_aai.runner.episode import ConversationContext, EpisodeSpec, episode_id

__all__ = ["Conversation", "ConversationContext", "ConversationError", "check_histories",
           "context_of", "conversation_orders", "earlier_turns", "plan_conversations"]


class ConversationError(ValueError):
    """A run directory whose conversations cannot be continued (a task finished out of order)."""


@dataclass(frozen=True)
class Conversation:
    """One trial's conversation as far as it is left to play.

    Attributes:
        conversation: its id.
        episode_ids: every task's episode, in the conversation's order.
        pending: the episodes left to play, in order: a suffix of ``episode_ids``.

    """

    conversation: str
    episode_ids: tuple[str, ...]
    pending: tuple[EpisodeSpec, ...]

    def position_of(self, spec: EpisodeSpec) -> int:
        """The 1-based place of ``spec`` in the conversation."""
        return self.episode_ids.index(spec.episode_id) + 1


def plan_conversations(task_ids: Sequence[str], trials: int, order: str, seed: int,
                       pending: Sequence[EpisodeSpec]) -> list[Conversation]:
    """The conversations with tasks left to play, one per trial, in trial order.

    Args:
        task_ids: the run's tasks in the run's order.
        trials: the run's trials.
        order: the conversations' order (``llm_aai.protocol.across_tasks.ORDERS``).
        seed: the run seed (a shuffled order is drawn from it).
        pending: the episodes without a result about the model (``Suite.pending``).

    Raises:
        ConversationError: a task is finished while one before it in its conversation is not
            (the history it was played with is gone, so the conversation cannot go on).

    """
    by_id = {spec.episode_id: spec for spec in pending}
    conversations = []
    for trial in range(1, trials + 1):
        ids = tuple(episode_id(task, trial) for task in
                    conversation_order(task_ids, order, seed=seed, trial=trial))
        first = next((i for i, eid in enumerate(ids) if eid in by_id), None)
        if first is None:
            continue
        finished_after = [eid for eid in ids[first:] if eid not in by_id]
        if finished_after:
            raise ConversationError(
                f"conversation {conversation_id(trial)}: episode {finished_after[0]} is finished "
                f"but {ids[first]}, played before it in the conversation, is not; its history "
                "cannot be rebuilt, so the conversation cannot be continued (start a new run)")
        conversations.append(Conversation(conversation_id(trial), ids,
                                          tuple(by_id[eid] for eid in ids[first:])))
    return conversations


def check_histories(conversations: Sequence[Conversation], episodes_dir: Path) -> None:
    """Read what every conversation's finished tasks will be sent as, before any task plays.

    The next task of a conversation is sent the earlier tasks' exchanges and last outcome,
    read from their turn logs and results (:func:`context_of`); a damaged one found only
    then would stop the run in the middle of a conversation.

    Raises:
        ConversationError: a finished task's turn log or result cannot be read; the message
            names the file (and line).

    """
    for conversation in conversations:
        first = conversation.position_of(conversation.pending[0]) - 1
        for eid in conversation.episode_ids[:first]:
            try:
                earlier_turns(episodes_dir / eid)
                read_result(episodes_dir / eid)
            except (SchemaError, OSError) as error:
                raise ConversationError(
                    f"conversation {conversation.conversation}: the history of {eid}, which "
                    f"the next task is sent, cannot be read: {error}. Repair that file, or "
                    "start a new run") from error


def earlier_turns(episode_dir: Path) -> list[PriorTurn]:
    """Every exchange of a finished task, read from its log (the frames as their files)."""
    return [PriorTurn(TurnInput(images=(), text=turn.sent_text, preamble=turn.sent_preamble,
                                image_paths=tuple(frame_file(episode_dir, p)
                                                  for p in turn.sent_images)),
                      turn.reply)
            for turn in read_turns(episode_dir) if turn.reply is not None]


def context_of(conversation: Conversation, spec: EpisodeSpec, episodes_dir: Path,
               messages: TurnMessages) -> ConversationContext:
    """What task ``spec`` is sent before it starts: the earlier tasks, then the last outcome.

    Everything is read from the earlier tasks' logs and results on disk, which hold exactly
    what was sent and how each task ended.
    """
    position = conversation.position_of(spec)
    before = conversation.episode_ids[: position - 1]
    earlier: list[PriorTurn] = []
    for eid in before:
        earlier.extend(earlier_turns(episodes_dir / eid))
    opening = None
    if before:
        last = read_result(episodes_dir / before[-1])
        opening = next_level_line(messages, reward=last.reward, health=last.final_health,
                                  passed=last.passed, position=position,
                                  count=len(conversation.episode_ids))
    return ConversationContext(conversation.conversation, position,
                               len(conversation.episode_ids), tuple(earlier), opening)


def conversation_orders(task_ids: Sequence[str], trials: int, order: str,
                        seed: int) -> Mapping[str, list[str]]:
    """Every conversation's task order, by conversation id (what the manifest records)."""
    return {conversation_id(trial): list(conversation_order(task_ids, order, seed=seed,
                                                            trial=trial))
            for trial in range(1, trials + 1)}
