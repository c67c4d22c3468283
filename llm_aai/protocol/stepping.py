"""Step a gymnasium-shaped env through actions and add up what happened.

These are the protocol's primitives: ``execute_actions`` plays one run of frame actions
(stopping at the end of the episode), ``run_initial_observations`` plays the start of an
episode (the no-ops after reset and the initial observations with their no-ops), and
``StepOutcome`` is what a run of steps did. ``llm_aai.protocol.episode`` builds the turn loop
on them; re-simulation (``llm_aai.replay.resimulate``) uses them directly to replay logged
actions.

The env is anything gymnasium-shaped: ``env.step(np.array([move, turn]))`` returning
``(observation, reward, terminated, truncated, info)`` with ``observation["health"]``. An env
that also has ``play(actions, observe=...)`` (``AnimalAIEnv``) plays a run with one render.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from llm_aai.protocol.settings import PAPER_PROTOCOL, EpisodeProtocol
from llm_aai.script.model import NOOP, Action, Script

Observation = Mapping[str, Any]


class StepEnv(Protocol):
    """The part of ``gymnasium.Env`` the protocol uses."""

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[Observation, dict[str, Any]]:
        """Start an episode."""
        ...

    def step(self, action: Any) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        """Advance one step."""
        ...


@dataclass(frozen=True)
class StepOutcome:
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
        views: what ``also_capture`` returned as each observation was taken (empty without
            it): e.g. the text observation of the same instant as the frame.

    """

    observations: tuple[Observation, ...]
    first_observation_health: float
    outcome: StepOutcome
    views: tuple[Any, ...] = ()


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
) -> StepOutcome:
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
            observation = observe_now(env)
        return StepOutcome(observation, health_of(observation), 0.0, 0, False, False, thoughts)
    # An unwrapped AnimalAIEnv plays the same trajectory with one render instead of one per
    # step. Wrapped envs go step by step so that wrappers (TimeLimit...) keep their say.
    play = getattr(env, "play", None)
    if play is not None:
        observation, reward, terminated, truncated, infos = play(actions, observe=observe)
        health = health_of(observation) if observation is not None else infos[-1]["health"]
        return StepOutcome(observation, float(health), float(reward), len(infos),
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
    return StepOutcome(
        observation=observation,
        health=health_of(observation),
        reward=reward,
        steps=steps,
        terminated=bool(terminated),
        truncated=bool(truncated),
        thoughts=thoughts,
        infos=tuple(infos),
    )


def observe_now(env: StepEnv) -> Observation:
    """The env's current observation, drawn now (for a frame a ``play`` skipped)."""
    observe = getattr(env, "observe", None)
    if observe is None:
        raise TypeError(f"{type(env).__name__} has no observe(): pass the current observation")
    return observe()


def execute_script(env: StepEnv, script: Script, *, observation: Observation) -> StepOutcome:
    """Play ``script`` step by step; the outcome's observation is taken with no waiting.

    Args:
        env: a gymnasium-style env in a running episode.
        script: the parsed script.
        observation: the current observation (what the model last saw).

    """
    return execute_actions(
        env, script.actions(), observation=observation, thoughts=script.thoughts
    )


def combine(outcomes: Sequence[StepOutcome]) -> StepOutcome:
    """Runs of steps taken one after another, as one outcome (sums, and the last state)."""
    last = outcomes[-1]
    return StepOutcome(
        observation=last.observation,
        health=last.health,
        reward=sum(outcome.reward for outcome in outcomes),
        steps=sum(outcome.steps for outcome in outcomes),
        terminated=last.terminated,
        truncated=last.truncated,
        thoughts=tuple(text for outcome in outcomes for text in outcome.thoughts),
        infos=tuple(info for outcome in outcomes for info in outcome.infos),
    )


def run_initial_observations(
    env: StepEnv,
    observation: Observation,
    protocol: EpisodeProtocol = PAPER_PROTOCOL,
    *,
    observe_last: bool = True,
    also_capture: Callable[[], Any] | None = None,
) -> InitialObservations:
    """Run the start of an episode: no-ops after reset, then the initial observations.

    Args:
        env: a gymnasium-style env right after ``reset``.
        observation: the observation ``reset`` returned.
        protocol: the step counts to use.
        observe_last: False skips drawing the frame after the last no-op block, which the
            model sees only if its first script takes no step (see ``execute_actions``).
        also_capture: called at the instant each shown observation is taken (no-ops follow
            it), its results kept as ``views``.

    """
    blocks = protocol.initial_observations
    runs = [execute_actions(env, [NOOP] * protocol.steps_after_reset, observation=observation,
                            observe=observe_last or blocks > 0)]
    shown: list[Observation] = []
    views: list[Any] = []
    for block in range(blocks):
        if runs[-1].done:
            break
        shown.append(runs[-1].observation)
        if also_capture is not None:
            views.append(also_capture())
        runs.append(execute_actions(
            env, [NOOP] * protocol.noops_after_initial_observation,
            observation=runs[-1].observation, observe=observe_last or block < blocks - 1,
        ))
    return InitialObservations(tuple(shown), runs[0].health, combine(runs), tuple(views))


def start_episode(
    env: StepEnv,
    protocol: EpisodeProtocol = PAPER_PROTOCOL,
    *,
    seed: int | None,
    arena: str | None = None,
    observe_last: bool = True,
    also_capture: Callable[[], Any] | None = None,
) -> InitialObservations:
    """Reset ``env`` (switching to ``arena`` if given) and run the initial observations.

    Args:
        env: a gymnasium-style env with ``reset(seed=..., options=...)``.
        protocol: the step counts to use.
        seed: the reset seed (fixes the arena's random placements).
        arena: an arena path or task id for ``options={"arena": ...}``; None keeps the env's.
        observe_last: see ``run_initial_observations``.
        also_capture: see ``run_initial_observations``.

    """
    options = {"arena": str(arena)} if arena is not None else None
    observation, _ = env.reset(seed=seed, options=options)
    return run_initial_observations(env, observation, protocol, observe_last=observe_last,
                                    also_capture=also_capture)
