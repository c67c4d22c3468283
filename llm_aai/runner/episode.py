"""One episode under the paper's protocol: observe, ask the agent, parse, act, log, repeat.

The runner knows no agent kind and no backend: agents turn text and images into reply text,
the script layer turns text into frame actions (or feedback for the model), and
``llm_aai.script.executor`` plays them in the env. Every turn is written to the episode log as
it happens, so a crash loses at most the episode in flight.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from llm_aai.agents.base import Agent, TurnInput
from llm_aai.llm.errors import LLMUnavailable
from llm_aai.logs.schema import EpisodeResult, TurnRecord, Usage
from llm_aai.logs.store import EpisodeWriter
from llm_aai.prompts import Prompt
from llm_aai.script import (
    NOOP,
    PAPER_PROTOCOL,
    PaperProtocol,
    Script,
    ScriptError,
    ScriptOutcome,
    execute_actions,
    parse_script,
    run_initial_observations,
)

UNLOGGED_EVENTS = frozenset({"decay"})
"""Event kinds the log leaves out: time decay happens on every step and is in ``reward``."""


class EpisodeCancelled(Exception):
    """The run was interrupted; the episode stops between turns and stays unfinished."""


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


@dataclass
class _Tally:
    """Running totals of one episode."""

    reward: float = 0.0
    steps: int = 0
    health: float = 100.0
    scripts: int = 0
    invalid: int = 0
    usage: list[Usage] = field(default_factory=list)
    end_reason: str | None = None
    terminated: bool = False
    truncated: bool = False

    @property
    def over(self) -> bool:
        return self.terminated or self.truncated

    def add(self, outcome: ScriptOutcome) -> None:
        self.reward += outcome.reward
        self.steps += outcome.steps
        self.health = round(outcome.health, 4)
        if outcome.done and not self.over:
            self.terminated, self.truncated = outcome.terminated, outcome.truncated
            last_info = outcome.infos[-1] if outcome.infos else {}
            self.end_reason = last_info.get("end_reason") or (
                "truncated" if outcome.truncated else "ended")


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


def _events(outcome: ScriptOutcome) -> tuple[dict[str, Any], ...]:
    """Reward events worth a line in the log: goals and zones, not the per-step time decay."""
    events = []
    for info in outcome.infos:
        for event in info.get("events", ()):
            if not isinstance(event, dict):
                event = {"kind": event.kind, "reward": event.reward, "step": event.step}
            if event["kind"] not in UNLOGGED_EVENTS:
                events.append(event)
    return tuple(events)


def _state(outcome: ScriptOutcome) -> dict[str, Any] | None:
    if not outcome.infos:
        return None
    info = outcome.infos[-1]
    state = {key: info[key] for key in ("position", "yaw") if key in info}
    return {k: [float(x) for x in v] if isinstance(v, tuple | list) else float(v)
            for k, v in state.items()} or None


class EpisodeRunner:
    """Plays one episode of a task with an agent in an env, writing every turn.

    Args:
        setup_gate: held while the episode sets up (reset and the initial observations),
            so that episodes sharing a CPU can be made to set up one at a time.
        should_stop: asked before every turn; when it answers True the episode raises
            :class:`EpisodeCancelled` (an interrupted run stops within one turn).
    """

    def __init__(
        self,
        env,
        agent: Agent,
        prompt: Prompt,
        protocol: PaperProtocol = PAPER_PROTOCOL,
        script_mode: str = "strict",
        setup_gate: AbstractContextManager | None = None,
        should_stop: Callable[[], bool] = lambda: False,
    ):
        self.env = env
        self.agent = agent
        self.prompt = prompt
        self.messages = prompt.messages
        self.protocol = protocol
        self.script_mode = script_mode
        self.setup_gate = setup_gate or nullcontext()
        self.should_stop = should_stop

    def run(self, spec: EpisodeSpec, writer: EpisodeWriter) -> EpisodeResult:
        """Play ``spec`` to its end; an unreachable model ends it as an infrastructure failure."""
        started = time.monotonic()
        tally = _Tally()
        try:
            self._play(spec, writer, tally)
        except LLMUnavailable as error:
            return self._result(spec, tally, started, "infrastructure", infra_error=str(error))
        return self._result(spec, tally, started, tally.end_reason or "script_cap")

    def _play(self, spec: EpisodeSpec, writer: EpisodeWriter, tally: _Tally) -> None:
        with self.setup_gate:
            observation, _ = self.env.reset(seed=spec.seed,
                                            options={"arena": str(spec.arena_path)})
            # the frame after the last no-ops is drawn only if the first script takes no step
            start = run_initial_observations(self.env, observation, self.protocol,
                                             observe_last=False)
        # the ICL prompt's worked example arrives as a prelude of prior exchanges
        self.agent.start_episode(self.prompt.system_text, spec.seed, prelude=self.prompt.prelude)
        tally.add(start.outcome)
        writer.write_turn(TurnRecord(  # the steps before the first script; nothing sent yet
            turn=0, sent_text="", actions=(NOOP,) * start.outcome.steps,
            steps=start.outcome.steps, health=tally.health, reward=start.outcome.reward,
            events=_events(start.outcome), terminated=start.outcome.terminated,
            truncated=start.outcome.truncated, state=_state(start.outcome),
        ))
        observation = start.outcome.observation
        images = [shown["image"] for shown in start.observations]
        preamble = self.messages.preamble
        text = self.messages.initial(start.first_observation_health)
        while not tally.over and tally.scripts < self.protocol.max_scripts:
            if self.should_stop():
                raise EpisodeCancelled(spec.episode_id)
            turn = tally.scripts + 1
            sent = tuple(writer.save_frame(turn, i, image) for i, image in enumerate(images))
            reply = self.agent.act(TurnInput(images=images, text=text, preamble=preamble,
                                             image_paths=[writer.directory / p for p in sent]))
            tally.scripts += 1
            usage = Usage(reply.input_tokens, reply.output_tokens, reply.cost_usd,
                          reply.latency_s, reply.retries)
            tally.usage.append(usage)
            try:
                script = parse_script(reply.text, mode=self.script_mode)
            except ScriptError as error:
                tally.invalid += 1
                actions = [NOOP] * self.protocol.noops_after_invalid_script
                feedback, commands, parse_error, notes = (
                    self.messages.invalid_reply(str(error)), None, str(error), ())
            else:
                actions = script.actions()
                feedback, commands, parse_error = None, command_records(script), None
                notes = tuple(str(note) for note in script.normalizations)
            outcome = execute_actions(self.env, actions, observation=observation)
            tally.add(outcome)
            observation = outcome.observation
            writer.write_turn(TurnRecord(
                turn=turn, sent_text=text, sent_preamble=preamble, sent_images=sent,
                reply=reply.text,
                commands=commands, parse_error=parse_error, normalizations=notes,
                actions=tuple(tuple(int(v) for v in a) for a in actions[: outcome.steps]),
                steps=outcome.steps, health=tally.health, reward=outcome.reward,
                events=_events(outcome), terminated=outcome.terminated,
                truncated=outcome.truncated, usage=usage, state=_state(outcome),
            ))
            images = [observation["image"]]
            preamble = self.messages.preamble
            if feedback:
                preamble = f"{feedback}\n\n{preamble}"
            text = self.messages.observation(tally.health)
        self._finish(writer, tally, observation)

    def _finish(self, writer: EpisodeWriter, tally: _Tally, observation) -> None:
        """After the last script: run out the clock if asked, and log the final frame."""
        outcome = ScriptOutcome(observation, tally.health, 0.0, 0, False, False)
        if not tally.over and self.protocol.run_out_clock:
            outcome = execute_actions(self.env, [NOOP] * self.protocol.run_out_max_steps,
                                      observation=observation)
            tally.add(outcome)
        final = outcome.observation
        if final is None:  # no script followed the initial observations' undrawn last frame
            final = self.env.observe()
        turn = tally.scripts + 1
        frame = writer.save_frame(turn, 0, final["image"])
        writer.write_turn(TurnRecord(
            turn=turn, sent_text=self.messages.episode_end(tally.reward, tally.health),
            sent_images=(frame,), actions=tuple([NOOP] * outcome.steps), steps=outcome.steps,
            health=tally.health, reward=outcome.reward, events=_events(outcome),
            terminated=tally.terminated, truncated=tally.truncated, state=_state(outcome),
        ))

    def _result(self, spec, tally: _Tally, started: float, end_reason: str,
                infra_error: str | None = None) -> EpisodeResult:
        infrastructure = end_reason == "infrastructure"
        return EpisodeResult(
            episode_id=spec.episode_id, task_id=spec.task_id, level=spec.level, trial=spec.trial,
            seed=spec.seed, agent=getattr(self.agent, "name", type(self.agent).__name__),
            passed=(not infrastructure) and tally.reward >= spec.pass_mark,
            reward=round(tally.reward, 6), pass_mark=spec.pass_mark,
            final_health=round(tally.health, 4), scripts_used=tally.scripts,
            invalid_replies=tally.invalid, end_reason=end_reason, steps=tally.steps,
            input_tokens=sum(u.input_tokens for u in tally.usage),
            output_tokens=sum(u.output_tokens for u in tally.usage),
            cost_usd=round(sum(u.cost_usd for u in tally.usage), 6),
            duration_s=round(time.monotonic() - started, 3), infra_error=infra_error,
        )
