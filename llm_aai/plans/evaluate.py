"""The plan metrics of a logged plan-then-act episode, by driving its plan again.

A run's log keeps each step's reward events but not what the agent bumped into, so the
plan's logged actions are played again after the same start (same seed, same protocol) in
the simulator, with ``llm_aai.plans.trace`` recording every step. The replay must end where
the logged episode did, or the evaluation is refused: a diverged world is not that plan.
"""

from __future__ import annotations

from pathlib import Path

from llm_aai.env import AnimalAIEnv
from llm_aai.logs.schema import TurnRecord
from llm_aai.logs.store import read_result, read_turns
from llm_aai.plans.metrics import PlanMetrics, ReferencePlan, plan_metrics
from llm_aai.plans.trace import trace_actions
from llm_aai.protocol import EpisodeProtocol, start_episode
from llm_aai.script import Command, Go, Script, Think, Turn

_OPS = {"Think": Think, "Go": Go, "Turn": Turn}


def logged_script(commands) -> Script | None:
    """The plan as the log recorded its parsed commands; None if it did not parse."""
    if commands is None:
        return None
    parsed: list[Command] = [_OPS[record["op"]](record["arg"]) for record in commands]
    return Script(tuple(parsed)) if parsed else None


def first_reply(directory: Path) -> TurnRecord:
    """The logged turn of an episode's first reply (its plan, in a plan run).

    Raises:
        ValueError: the episode has no reply.
    """
    first = next((t for t in read_turns(directory) if t.reply is not None), None)
    if first is None:
        raise ValueError(f"{directory}: the episode has no reply to score as a plan")
    return first


def evaluate_plan_episode(episode_dir: str | Path, arena_path: str | Path,
                          protocol: EpisodeProtocol, *,
                          reference: ReferencePlan | None = None) -> PlanMetrics:
    """Score the plan of one logged episode (its first reply) against ``reference``.

    Raises:
        ValueError: the episode has no reply, or driving its plan again did not take the
            steps the log recorded.
    """
    directory = Path(episode_dir)
    result = read_result(directory)
    first = first_reply(directory)
    plan = logged_script(first.commands)
    env = AnimalAIEnv(resolution=64, backend="embedded")
    try:
        start_episode(env, protocol, seed=result.seed, arena=str(arena_path),
                      observe_last=False)
        sim = env.backend.simulator
        trace = trace_actions(sim, sim.objects, first.actions) if plan is not None else []
    finally:
        env.close()
    if plan is not None and len(trace) != first.steps:
        raise ValueError(f"{directory}: the plan took {len(trace)} steps when driven again, "
                         f"the log says {first.steps}; the world it played in differs")
    return plan_metrics(task_id=result.task_id, level=result.level, plan=plan,
                        passed=result.passed, reward=result.reward, trace=trace,
                        reference=reference)
