"""One episode with an agent: ask it, play its reply under the protocol, log the turn, repeat.

The runner knows no agent kind and no backend: agents turn text and images into reply text,
and ``llm_aai.protocol.Episode`` plays each reply in the env under the paper's protocol (the
start, the reply cap, the run-out). What the runner adds is the conversation (the prompt's
messages, feedback for a refused reply) and the log: every turn is written as it happens, so
a crash loses at most the episode in flight.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llm_aai.agents.base import Agent, PriorTurn, TurnInput, continue_conversation
from llm_aai.llm.call_stop import CallCancelled, calls_stop_when
from llm_aai.llm.errors import ContextOverflow, LLMUnavailable
from llm_aai.logs.events import logged_events
from llm_aai.logs.schema import (
    CONTEXT_OVERFLOW,
    EpisodeResult,
    TurnRecord,
    Usage,
    summed_cost,
)
from llm_aai.logs.store import EpisodeWriter
from llm_aai.perception.observer import IMAGE_ONLY, ObservationMode
from llm_aai.prompts import Prompt
from llm_aai.protocol import (
    PAPER_PROTOCOL,
    Episode,
    EpisodeProtocol,
    PlayedTurn,
    StepOutcome,
)
from llm_aai.protocol.modes import PAPER_MODE, ModeSettings
from llm_aai.runner.budget import BUDGET, BudgetReached
from llm_aai.runner.shown_frames import frames_shown
from llm_aai.script import NOOP, Script

log = logging.getLogger(__name__)


class EpisodeCancelled(Exception):
    """The run was interrupted; the episode stops between turns and stays unfinished."""


@dataclass(frozen=True)
class ConversationContext:
    """Where one task sits in its conversation (``--context across-tasks``), and what precedes it.

    Attributes:
        conversation: the conversation's id (``trial-1``), recorded in the task's result.
        position: the task's place in the conversation (1 for the first).
        count: the tasks in the conversation.
        earlier: every exchange of the tasks before it, in order (given to the agent after
            its prompt).
        opening: the line sent before the task's first pictures (the last task's outcome);
            None for the first task.

    """

    conversation: str
    position: int
    count: int
    earlier: tuple[PriorTurn, ...] = ()
    opening: str | None = None


@dataclass(frozen=True)
class EpisodeSpec:
    """Which episode to play: the task, the trial and the seed that makes it reproducible."""

    episode_id: str
    task_id: str
    level: int
    trial: int
    seed: int
    arena_path: Path
    pass_mark: float
    parent_task: str | None = None


def episode_id(task_id: str, trial: int) -> str:
    """The directory name of an episode."""
    return f"{task_id}_t{trial}"


def command_records(script: Script) -> tuple[dict[str, Any], ...]:
    """The parsed commands as plain JSON data for the log."""
    records = []
    for command in script.commands:
        name = type(command).__name__
        arg = getattr(command, "text", None)
        if arg is None:
            arg = getattr(command, "steps", None)
        if arg is None:
            arg = command.degrees
        records.append({"op": name, "arg": arg})
    return tuple(records)


def _state(outcome: StepOutcome) -> dict[str, Any] | None:
    if not outcome.infos:
        return None
    info = outcome.infos[-1]
    state = {key: info[key] for key in ("position", "yaw") if key in info}
    return {k: [float(x) for x in v] if isinstance(v, tuple | list) else float(v)
            for k, v in state.items()} or None


CUT = "length"
"""The finish reason of a reply the server stopped at the reply length limit."""


def cut_reply_error(output_tokens: int) -> str:
    """What the feedback says of a reply cut at the length limit.

    The limit cut it, not the model's grammar (its unclosed ``Think(`` is where the cut fell).
    """
    limit = f" ({output_tokens} tokens)" if output_tokens else ""  # a cached reply bills none
    return (f"it was cut off at the reply length limit{limit} before it ended. Send a "
            f"shorter reply: a brief Think(...), then the commands.")


def _charged(error: BaseException) -> Usage:
    """What a call that ended in ``error`` was charged for its tries sent unanswered."""
    return Usage(unanswered_cost_usd=getattr(error, "unanswered_cost_usd", 0.0) or None)


def _health(episode: Episode) -> float:
    """Health as logged and shown to the model: rounded to 4 decimals."""
    return round(episode.totals.health, 4)


class EpisodeRunner:
    """Plays one episode of a task with an agent in an env, writing every turn.

    Args:
        setup_gate: held while the episode sets up (reset and the initial observations),
            so that episodes sharing a CPU can be made to set up one at a time.
        should_stop: asked before every turn, and by a model call while it waits for its
            turn at the provider or its next try; when it answers True the episode raises
            :class:`EpisodeCancelled` (an interrupted run stops within one turn, and sends no
            call after the stop).
        modes: the control and observation modes (the paper's by default).
        observation: images, a text description of what the eye sees, or both
            (``llm_aai.perception``). The text describes the state when the message is
            sent: after the start's no-ops, then after each script.
        context: the task's place in its conversation with ``--context across-tasks``;
            None: the task is its own conversation (the paper).
    """

    def __init__(
        self,
        env,
        agent: Agent,
        prompt: Prompt,
        protocol: EpisodeProtocol = PAPER_PROTOCOL,
        script_mode: str = "strict",
        setup_gate: AbstractContextManager | None = None,
        should_stop: Callable[[], bool] = lambda: False,
        modes: ModeSettings = PAPER_MODE,
        observation: ObservationMode = IMAGE_ONLY,
        context: ConversationContext | None = None,
    ):
        self.env = env
        self.agent = agent
        self.prompt = prompt
        self.messages = prompt.messages
        self.protocol = protocol
        self.script_mode = script_mode
        self.setup_gate = setup_gate or nullcontext()
        self.should_stop = should_stop
        self.modes = modes
        self.observation = observation
        self.context = context

    def run(self, spec: EpisodeSpec, writer: EpisodeWriter) -> EpisodeResult:
        """Play ``spec`` to its end; an unreachable model ends it as an infrastructure failure."""
        started = time.monotonic()
        episode = Episode(self.env, self.protocol,
                          control=self.modes.make_control(
                              self.script_mode, our_text=(self.messages.invalid_reply(""),)),
                          observations=self.modes.make_observations())
        usage: list[Usage] = []
        try:
            with calls_stop_when(self.should_stop):  # a stop ends a call's wait for its turn
                self._play(spec, writer, episode, usage)
        except CallCancelled:
            raise EpisodeCancelled(spec.episode_id) from None
        except LLMUnavailable as error:  # a timed-out call may be billed: what it was charged
            usage.append(_charged(error))
            return self._result(spec, episode, usage, started, "infrastructure",
                                infra_error=str(error))
        except ContextOverflow as error:  # this conversation only: the next one starts short
            log.warning("%s: %s; the episode ends here (%s), the run goes on",
                        spec.episode_id, error, CONTEXT_OVERFLOW)
            usage.append(_charged(error))
            return self._result(spec, episode, usage, started, CONTEXT_OVERFLOW)
        except BudgetReached as error:  # no result about the model either; resume continues it
            usage.append(_charged(error))  # a retry refused after tries sent unanswered
            return self._result(spec, episode, usage, started, BUDGET, infra_error=str(error))
        return self._result(spec, episode, usage, started,
                            episode.totals.end_reason or self._cap_reason(episode))

    def _play(self, spec: EpisodeSpec, writer: EpisodeWriter, episode: Episode,
              usage: list[Usage]) -> None:
        with self.setup_gate:
            # the frame after the last no-ops is drawn only if the first script takes no step
            start = episode.start(seed=spec.seed, arena=str(spec.arena_path), observe_last=False,
                                  also_capture=self.observation.capture(self.env))
        # the ICL prompt's worked example arrives as a prelude of prior exchanges
        self.agent.start_episode(self.prompt.system_text, spec.seed, prelude=self.prompt.prelude)
        if self.context is not None:  # the earlier tasks of its conversation come first
            continue_conversation(self.agent, self.context.earlier)
        bind_world = getattr(self.agent, "bind_world", None)
        if bind_world is not None:  # a privileged agent (the oracle) reads the world itself
            bind_world(self.env, spec.pass_mark)
        writer.write_turn(TurnRecord(  # the steps before the first script; nothing sent yet
            turn=0, sent_text="", actions=(NOOP,) * start.outcome.steps,
            steps=start.outcome.steps, health=_health(episode),
            health_told=round(start.first_observation_health, 4),  # the paper's turn-0 health
            reward=start.outcome.reward,
            events=logged_events(start.outcome.infos), terminated=start.outcome.terminated,
            truncated=start.outcome.truncated, state=_state(start.outcome),
        ))
        images = self.observation.first_images([s["image"] for s in start.observations])
        preamble = self.messages.preamble
        if self.context is not None and self.context.opening:  # how the last task ended
            preamble = f"{self.context.opening}\n\n{preamble}"
        text = self.observation.first_message(self.env, self.messages.initial(
            start.first_observation_health), start.views[-1] if start.views else None)
        while episode.wants_reply:
            if self.should_stop():
                raise EpisodeCancelled(spec.episode_id)
            number = episode.totals.replies + 1
            sent = tuple(writer.save_frame(number, i, image) for i, image in enumerate(images))
            reply = self.agent.act(TurnInput(images=images, text=text, preamble=preamble,
                                             image_paths=[writer.directory / p for p in sent]))
            usage.append(Usage(reply.input_tokens, reply.output_tokens,
                               reply.cost_usd if reply.cost_known else None,
                               reply.latency_s, reply.retries,
                               reply.unanswered_cost_usd or None))
            turn = episode.play(reply.text)
            writer.write_turn(self._turn_record(turn, text, preamble, sent, usage[-1], episode,
                                                reply.notes, reply.finish_reason))
            shown = frames_shown(turn, episode.observations, self.modes, self.messages)
            images = list(shown.images) if self.observation.images else []
            preamble = self.messages.preamble
            if turn.decision.refused:
                feedback = self.messages.invalid_reply(
                    cut_reply_error(reply.output_tokens) if reply.finish_reason == CUT
                    else turn.decision.error)
                preamble = f"{feedback}\n\n{preamble}"
            if episode.wants_reply:
                text = self.observation.message(self.env, self.messages.observation(
                    _health(episode)))
                if shown.line:
                    text = f"{shown.line}\n{text}"
        self._finish(writer, episode)

    @staticmethod
    def _turn_record(turn: PlayedTurn, text: str, preamble: str, sent: tuple[str, ...],
                     usage: Usage, episode: Episode, reply_notes: tuple[str, ...] = (),
                     finish_reason: str | None = None) -> TurnRecord:
        decision, outcome = turn.decision, turn.outcome
        return TurnRecord(
            turn=turn.number, sent_text=text, sent_preamble=preamble, sent_images=sent,
            reply=turn.reply,
            commands=(decision.commands if decision.script is None
                      else command_records(decision.script)),
            parse_error=decision.error, normalizations=(*reply_notes, *decision.notes),
            actions=tuple(tuple(int(v) for v in a) for a in turn.actions[: outcome.steps]),
            steps=outcome.steps, health=_health(episode), reward=outcome.reward,
            events=logged_events(outcome.infos), terminated=outcome.terminated,
            truncated=outcome.truncated, usage=usage, state=_state(outcome),
            finish_reason=finish_reason,
        )

    def _finish(self, writer: EpisodeWriter, episode: Episode) -> None:
        """After the last script: run out the clock if asked, and log the final frame."""
        outcome = episode.run_out()
        totals = episode.totals
        final = episode.observe()  # drawn now if no script followed the undrawn start frame
        turn = totals.replies + 1
        frame = writer.save_frame(turn, 0, final["image"])
        writer.write_turn(TurnRecord(
            turn=turn, sent_text=self.messages.episode_end(totals.reward, _health(episode)),
            sent_images=(frame,), actions=tuple([NOOP] * outcome.steps), steps=outcome.steps,
            health=_health(episode), reward=outcome.reward, events=logged_events(outcome.infos),
            terminated=totals.terminated, truncated=totals.truncated, state=_state(outcome),
        ))

    def _cap_reason(self, episode: Episode) -> str:
        """Why an episode the env did not end stopped: the script cap or the reply guard."""
        guard = self.protocol.max_replies
        return "reply_guard" if guard is not None and episode.totals.replies >= guard \
            else "script_cap"

    def _result(self, spec, episode: Episode, usage: list[Usage], started: float,
                end_reason: str, infra_error: str | None = None) -> EpisodeResult:
        infrastructure = end_reason in ("infrastructure", BUDGET)
        totals = episode.totals
        cost = summed_cost(u.cost_usd for u in usage)  # None: a call had no known price
        unanswered = sum(u.unanswered_cost_usd or 0.0 for u in usage)  # an estimate, apart
        return EpisodeResult(
            episode_id=spec.episode_id, task_id=spec.task_id, level=spec.level, trial=spec.trial,
            seed=spec.seed, agent=getattr(self.agent, "name", type(self.agent).__name__),
            passed=(not infrastructure) and totals.reward >= spec.pass_mark,
            reward=round(totals.reward, 6), pass_mark=spec.pass_mark,
            final_health=_health(episode), scripts_used=totals.replies,
            invalid_replies=totals.refused, end_reason=end_reason, steps=totals.steps,
            input_tokens=sum(u.input_tokens for u in usage),
            output_tokens=sum(u.output_tokens for u in usage),
            cost_usd=None if cost is None else round(cost, 6),
            duration_s=round(time.monotonic() - started, 3), infra_error=infra_error,
            conversation=self.context.conversation if self.context else None,
            position=self.context.position if self.context else None,
            parent_task=spec.parent_task,
            unanswered_cost_usd=round(unanswered, 6) if unanswered else None,
        )
