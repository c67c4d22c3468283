"""Play scripts in an environment under the paper's episode protocol.

The LLM-AAI harness (``LLM:src/experimentation/experiments/experiment1.py``) ran an episode as:
reset, one no-op step, then three observations for the model each followed by 16 no-op steps
(48 in total, only at the start), then up to 30 scripts. After each script the observation is
taken at once, with no waiting. A reply that failed to parse cost one no-op step. When the
model ran out of scripts the harness kept stepping no-ops until the episode ended, so an agent
could not bank health by stopping early. ``PaperProtocol`` records those numbers as data so a
runner can vary them; the functions here only step the env and add up what happened.

The env is anything gymnasium-shaped: ``env.step(np.array([move, turn]))`` returning
``(observation, reward, terminated, truncated, info)`` with ``observation["health"]``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from llm_aai.script.model import NOOP, Action, Script

Observation = Mapping[str, Any]


class StepEnv(Protocol):
    """The part of ``gymnasium.Env`` the executor uses."""

    def step(self, action: Any) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        """Advance one step."""
        ...


@dataclass(frozen=True)
class PaperProtocol:
    """The paper's episode protocol as numbers.

    Attributes:
        steps_after_reset: no-op steps between reset and the first observation.
        initial_observations: observations shown before the first script.
        noops_after_initial_observation: no-op steps after each initial observation.
        max_scripts: scripts the model may send per episode.
        noops_after_invalid_script: no-op steps taken when a reply does not parse.
        run_out_clock: after the last script, step no-ops until the episode ends.
        run_out_max_steps: bound on that run-out (an arena with t=0 never ends by itself).

    """

    steps_after_reset: int = 1
    initial_observations: int = 3
    noops_after_initial_observation: int = 16
    max_scripts: int = 30
    noops_after_invalid_script: int = 1
    run_out_clock: bool = True
    run_out_max_steps: int = 5000


PAPER_PROTOCOL = PaperProtocol()


@dataclass(frozen=True)
class ScriptOutcome:
    """What playing one script (or one run of actions) did.

    Attributes:
        observation: the observation after the last step taken (the one passed in if no step
            was taken, e.g. ``Turn(5);`` or a script of thoughts); None if its frame was not
            drawn (``observe=False``).
        health: health in that observation.
        reward: reward summed over the steps taken.
        steps: steps taken; fewer than the script's actions if the episode ended.
        terminated: the episode ended inside the env (goal, death, health out).
        truncated: the episode was cut from outside (e.g. a time-limit wrapper).
        thoughts: the script's ``Think`` texts, in order.
        infos: the ``info`` dict of every step taken, in order (reward events live there).

    """

    observation: Observation | None
    health: float
    reward: float
    steps: int
    terminated: bool
    truncated: bool
    thoughts: tuple[str, ...] = ()
    infos: tuple[Mapping[str, Any], ...] = ()

    @property
    def done(self) -> bool:
        """The episode is over (terminated or truncated)."""
        return self.terminated or self.truncated


@dataclass(frozen=True)
class InitialObservations:
    """The observations shown before the first script, and what the no-op steps cost.

    Attributes:
        observations: the observations shown to the model, in order (fewer if the episode
            ended early).
        first_observation_health: health when the first observation was taken. The paper's
            harness displayed this value at turn 0, although 48 no-op steps followed.
        outcome: totals over every step taken (health and observation at the end).

    """

    observations: tuple[Observation, ...]
    first_observation_health: float
    outcome: ScriptOutcome


def health_of(observation: Observation) -> float:
    """Health as a float, whether stored as a scalar or a one-element array."""
    return float(np.asarray(observation["health"], dtype=np.float64).reshape(-1)[0])


def execute_actions(
    env: StepEnv,
    actions: Iterable[Action],
    *,
    observation: Observation | None,
    thoughts: tuple[str, ...] = (),
    observe: bool = True,
) -> ScriptOutcome:
    """Step ``env`` through ``actions``, stopping at the end of the episode.

    Args:
        env: a gymnasium-style env in a running episode.
        actions: ``(move, turn)`` pairs, one per step.
        observation: the current observation, returned unchanged if no step is taken; None
            when its frame was never drawn (then ``env.observe()`` draws it if needed).
        thoughts: carried into the outcome.
        observe: False lets an env with ``play(actions, observe=False)`` skip drawing the
            last frame; the outcome's observation is then None unless the episode ended.

    """
    actions = [np.array(action, dtype=np.int64) for action in actions]
    if not actions:
        if observation is None:
            observation = _observe_now(env)
        return ScriptOutcome(observation, health_of(observation), 0.0, 0, False, False, thoughts)
    # An unwrapped AnimalAIEnv plays the same trajectory with one render instead of one per
    # step. Wrapped envs go step by step so that wrappers (TimeLimit...) keep their say.
    play = getattr(env, "play", None)
    if play is not None:
        observation, reward, terminated, truncated, infos = play(actions, observe=observe)
        health = health_of(observation) if observation is not None else infos[-1]["health"]
        return ScriptOutcome(observation, float(health), float(reward), len(infos),
                             bool(terminated), bool(truncated), thoughts, tuple(infos))
    reward = 0.0
    steps = 0
    terminated = truncated = False
    infos: list[Mapping[str, Any]] = []
    for action in actions:
        observation, step_reward, terminated, truncated, info = env.step(action)
        steps += 1
        reward += float(step_reward)
        infos.append(info)
        if terminated or truncated:
            break
    return ScriptOutcome(
        observation=observation,
        health=health_of(observation),
        reward=reward,
        steps=steps,
        terminated=bool(terminated),
        truncated=bool(truncated),
        thoughts=thoughts,
        infos=tuple(infos),
    )


def _observe_now(env: StepEnv) -> Observation:
    observe = getattr(env, "observe", None)
    if observe is None:
        raise TypeError(f"{type(env).__name__} has no observe(): pass the current observation")
    return observe()


def execute_script(env: StepEnv, script: Script, *, observation: Observation) -> ScriptOutcome:
    """Play ``script`` step by step; the outcome's observation is taken with no waiting.

    Args:
        env: a gymnasium-style env in a running episode.
        script: the parsed script.
        observation: the current observation (what the model last saw).

    """
    return execute_actions(
        env, script.actions(), observation=observation, thoughts=script.thoughts
    )


def run_initial_observations(
    env: StepEnv,
    observation: Observation,
    protocol: PaperProtocol = PAPER_PROTOCOL,
    *,
    observe_last: bool = True,
) -> InitialObservations:
    """Run the start of an episode: no-ops after reset, then the initial observations.

    Args:
        env: a gymnasium-style env right after ``reset``.
        observation: the observation ``reset`` returned.
        protocol: the step counts to use.
        observe_last: False skips drawing the frame after the last no-op block, which the
            model sees only if its first script takes no step (see ``execute_actions``).

    """
    blocks = protocol.initial_observations
    outcome = execute_actions(env, [NOOP] * protocol.steps_after_reset, observation=observation,
                              observe=observe_last or blocks > 0)
    first_health = outcome.health
    shown: list[Observation] = []
    reward, steps, infos = outcome.reward, outcome.steps, list(outcome.infos)
    for block in range(blocks):
        if outcome.done:
            break
        shown.append(outcome.observation)
        outcome = execute_actions(
            env, [NOOP] * protocol.noops_after_initial_observation,
            observation=outcome.observation, observe=observe_last or block < blocks - 1,
        )
        reward += outcome.reward
        steps += outcome.steps
        infos.extend(outcome.infos)
    total = ScriptOutcome(
        observation=outcome.observation,
        health=outcome.health,
        reward=reward,
        steps=steps,
        terminated=outcome.terminated,
        truncated=outcome.truncated,
        infos=tuple(infos),
    )
    return InitialObservations(tuple(shown), first_health, total)
