"""One oracle episode played on a headless simulator, under the paper's protocol.

This is what the audit and the variants' validation run: the oracle's replies played through
``llm_aai.protocol.Episode`` (which owns the no-ops after reset and around the initial
observations, the script cap and the run-out of the clock) on ``HeadlessEnv``, so nothing is
drawn or logged and a task costs only its physics and search. The runner plays the same
oracle through ``llm_aai.agents.oracle`` with frames and logs; both make their replies with
``llm_aai.oracle.replies`` and give the same scripts for the same seed and budget.

``per_frame=True`` measures the ``oracle-frames`` ceiling: the oracle searches over any of the
3 x 3 actions and plays its plan through the protocol's action control
(``llm_aai.protocol.action_control``), with no script cap, replanning whenever its plan runs
out; when a search finds nothing (its budget spent) it stops replying and the protocol runs
out the clock.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

from llm_aai.arena.placement import PlacedArena
from llm_aai.env.headless import HeadlessEnv
from llm_aai.oracle.replies import frame_replies, script_reply
from llm_aai.oracle.search import SearchSettings, plan_script
from llm_aai.protocol import PAPER_PROTOCOL, Episode, EpisodeProtocol
from llm_aai.protocol.action_control import ActionControl
from llm_aai.sim.simulator import PHYSICS_BUILDS


@dataclass(frozen=True)
class OracleEpisode:
    """How an oracle episode went.

    Attributes:
        reward: the episode's return.
        passed: ``reward >= pass_mark`` (the runner's rule).
        pass_mark: the mark it was held to.
        steps: AAI steps the episode took (initial no-ops and run-out included).
        scripts: scripts sent (per-action mode: plans made).
        searched: simulated AAI steps the search took.
        search_seconds: wall time of the search and play (this process).
        end_reason: the simulator's end reason, or ``"time_not_up"`` if the clock never ran
            out (an arena with no time limit).
        texts: the scripts sent, in order (empty in per-action mode).
    """

    reward: float
    passed: bool
    pass_mark: float
    steps: int
    scripts: int
    searched: int
    search_seconds: float
    end_reason: str
    texts: tuple[str, ...] = ()


def play_oracle_episode(placed: PlacedArena, settings: SearchSettings,
                        protocol: EpisodeProtocol = PAPER_PROTOCOL, *,
                        physics_build: str = PHYSICS_BUILDS[0]) -> OracleEpisode:
    """Play ``placed`` with the oracle (see the module doc) and report the outcome.

    Args:
        placed: the arena with its random values drawn.
        settings: the search's settings.
        protocol: the episode protocol (the paper's).
        physics_build: the Animal-AI build whose physics the simulator follows
            (``llm_aai.sim.simulator.PHYSICS_BUILDS``, the first the default): the audit
            measures build-dependent tasks with it.
    """
    started = time.process_time()
    env = HeadlessEnv(placed, physics_build=physics_build)
    if settings.per_frame:  # no script cap; each reply is one action, repeated
        episode = Episode(env, dataclasses.replace(protocol, max_scripts=None),
                          control=ActionControl())
    else:
        episode = Episode(env, protocol)
    try:
        episode.start(seed=settings.seed)
        plans, left, texts = _play_plans(episode, env, settings)
        episode.run_out()
        reward, end_reason = env.simulator.total_reward, env.simulator.end_reason
    finally:
        env.close()
    return OracleEpisode(
        reward=round(reward, 6), passed=reward >= settings.pass_mark,
        pass_mark=settings.pass_mark, steps=episode.totals.steps, scripts=plans,
        searched=settings.budget - left, search_seconds=round(time.process_time() - started, 3),
        end_reason=end_reason or "time_not_up", texts=tuple(texts))


def _play_plans(episode: Episode, env: HeadlessEnv,
                settings: SearchSettings) -> tuple[int, int, list[str]]:
    """Search and reply while the episode wants replies.

    Returns:
        (plans made, budget left, the scripts sent: none in per-action mode).
    """
    left = settings.budget
    texts: list[str] = []
    plans = 0
    hint = None
    while episode.wants_reply:
        plan = plan_script(env.simulator, dataclasses.replace(settings, seed=settings.seed + plans),
                           max(left, 0), hint)
        left -= plan.searched
        plans += 1
        if settings.per_frame:
            if not plan.actions:  # nothing more to search with: the clock runs out
                break
            for reply in frame_replies(plan.actions):
                if not episode.wants_reply:
                    break
                episode.play(reply)
        else:
            text, hint = script_reply(plan)
            texts.append(text)
            episode.play(text)
    return plans, left, texts
