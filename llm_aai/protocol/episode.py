"""One episode under the protocol, driven one reply at a time.

``Episode`` is the turn loop written once: the runner (an agent's replies), playback (a list
of scripts) and calibration (the Unity recording's scripts) all play through it::

    episode = Episode(env, PAPER_PROTOCOL, control=ScriptControl("strict"))
    start = episode.start(seed=0, arena="01-04-03")     # shows start.observations
    while episode.wants_reply:
        turn = episode.play(reply)                      # shows turn.observations next
    end = episode.run_out()                             # no-ops to the end, if the protocol says

Whoever drives it owns the conversation (prompts, feedback text, logs); the episode owns
what happens in the env and the running totals (``episode.totals``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from llm_aai.protocol.control import Control, Decision, ScriptControl
from llm_aai.protocol.observation import LAST_FRAME, ObservationPolicy
from llm_aai.protocol.settings import PAPER_PROTOCOL, EpisodeProtocol
from llm_aai.protocol.stepping import (
    InitialObservations,
    Observation,
    StepEnv,
    StepOutcome,
    combine,
    execute_actions,
    observe_now,
    start_episode,
)
from llm_aai.script.model import NOOP, Action


@dataclass
class Totals:
    """Running totals of an episode, in the order its steps were taken.

    Attributes:
        reward: reward summed over every step.
        steps: steps taken.
        health: health after the last step.
        replies: replies played (refused ones included).
        refused: replies refused by the control.
        terminated: the env ended the episode (goal, death, health out).
        truncated: the episode was cut from outside (a time-limit wrapper).
        end_reason: the env's reason for the end (``info["end_reason"]``), else
            ``"truncated"`` or ``"ended"``; None while the episode runs.

    """

    reward: float = 0.0
    steps: int = 0
    health: float = 100.0
    replies: int = 0
    refused: int = 0
    terminated: bool = False
    truncated: bool = False
    end_reason: str | None = None

    @property
    def over(self) -> bool:
        """The episode has ended in the env."""
        return self.terminated or self.truncated

    def add(self, outcome: StepOutcome) -> None:
        """Count a run of steps; the first run that ends the episode sets how it ended."""
        self.reward += outcome.reward
        self.steps += outcome.steps
        self.health = outcome.health
        if outcome.done and not self.over:
            self.terminated, self.truncated = outcome.terminated, outcome.truncated
            last_info = outcome.infos[-1] if outcome.infos else {}
            self.end_reason = last_info.get("end_reason") or (
                "truncated" if outcome.truncated else "ended")


@dataclass(frozen=True)
class PlayedTurn:
    """One reply and what it did.

    Attributes:
        number: 1 for the first reply.
        reply: the reply as received.
        decision: how the control read it.
        actions: the actions sent to the env (the protocol's no-ops for a refused reply);
            the env took the first ``outcome.steps`` of them.
        outcome: what the steps did, summed over the turn.
        observations: what goes with the next message, in order (the paper: the one frame
            after the last step, or the current one if no step was taken).

    """

    number: int
    reply: str
    decision: Decision
    actions: tuple[Action, ...]
    outcome: StepOutcome
    observations: tuple[Observation, ...]


class Episode:
    """An episode in ``env`` under ``protocol``: start, then one ``play`` per reply.

    Args:
        env: a gymnasium-style env (see ``llm_aai.protocol.stepping.StepEnv``).
        protocol: the protocol's numbers.
        control: how replies become actions (default: the paper's strict scripts).
        observations: which frames go with the next message (default: the paper's).

    """

    def __init__(
        self,
        env: StepEnv,
        protocol: EpisodeProtocol = PAPER_PROTOCOL,
        *,
        control: Control | None = None,
        observations: ObservationPolicy = LAST_FRAME,
    ) -> None:
        self.env = env
        self.protocol = protocol
        self.control = control or ScriptControl()
        self.observations = observations
        self.totals = Totals()
        self.observation: Observation | None = None
        """The current observation; None while its frame is not drawn (``observe`` draws it)."""

    def start(self, *, seed: int | None, arena: str | None = None,
              observe_last: bool = True,
              also_capture: Callable[[], Any] | None = None) -> InitialObservations:
        """Reset the env and run the initial observations (see ``start_episode``)."""
        start = start_episode(self.env, self.protocol, seed=seed, arena=arena,
                              observe_last=observe_last, also_capture=also_capture)
        self.totals.add(start.outcome)
        self.observation = start.outcome.observation
        return start

    @property
    def wants_reply(self) -> bool:
        """The episode runs and neither the script cap nor the reply guard (if any) is reached."""
        replies = self.totals.replies
        return not self.totals.over and all(
            cap is None or replies < cap
            for cap in (self.protocol.max_scripts, self.protocol.max_replies))

    def play(self, reply: str, *, observe: bool = True) -> PlayedTurn:
        """Read ``reply`` with the control and take its actions (or the protocol's no-ops).

        ``observe=False`` skips drawing the frames nobody will look at (a what-if's); the
        trajectory is the same, and ``observe()`` draws the current frame if it is wanted.

        Raises:
            RuntimeError: the episode takes no more replies (see ``wants_reply``).

        """
        if not self.wants_reply:
            raise RuntimeError("the episode takes no more replies: it ended or reached "
                               f"its cap of {self.protocol.max_scripts} scripts or "
                               f"{self.protocol.max_replies} replies")
        decision = self.control.decide(reply)
        actions = decision.actions
        if decision.refused:
            actions = (NOOP,) * self.protocol.noops_after_invalid_script
        self.totals.replies += 1
        self.totals.refused += decision.refused
        runs = []
        for run in self.observations.runs(actions):
            runs.append(execute_actions(self.env, run, observation=self.observation,
                                        observe=observe))
            self.observation = runs[-1].observation
            if runs[-1].done:
                break
        outcome = runs[0] if len(runs) == 1 else combine(runs)
        self.totals.add(outcome)
        return PlayedTurn(self.totals.replies, reply, decision, actions, outcome,
                    tuple(run.observation for run in runs))

    def run_out(self) -> StepOutcome:
        """After the last reply: step no-ops until the episode ends, if the protocol says so.

        Returns what those steps did; no step (and the current observation) if the episode
        is over already or the protocol does not run out the clock.
        """
        if self.totals.over or not self.protocol.run_out_clock:
            return StepOutcome(self.observation, self.totals.health, 0.0, 0, False, False)
        outcome = execute_actions(self.env, [NOOP] * self.protocol.run_out_max_steps,
                                  observation=self.observation)
        self.totals.add(outcome)
        self.observation = outcome.observation
        return outcome

    def observe(self) -> Observation:
        """The current observation, drawing its frame now if it was skipped."""
        if self.observation is None:
            self.observation = observe_now(self.env)
        return self.observation
