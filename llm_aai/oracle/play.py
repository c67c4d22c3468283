"""One oracle episode played directly on a simulator, under the paper's protocol.

This is what the audit runs: the same steps as the runner's episode (no-ops after reset and
around the three initial observations, at most ``max_scripts`` scripts, then the clock run
out) with nothing drawn and nothing logged, so a task costs only its physics and search.
The runner plays the same oracle through ``llm_aai.agents.oracle`` with frames and logs;
both give the same scripts for the same seed and budget.

``per_frame=True`` measures the ``oracle-frames`` ceiling: the protocol has no per-frame
mode, so here the oracle acts on every AAI step (any of the 3 x 3 actions) with no script
cap, replanning whenever its plan runs out, until the episode ends.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from llm_aai.arena.placement import PlacedArena
from llm_aai.oracle.search import WAIT, SearchSettings, describe, plan_script, to_script
from llm_aai.protocol import PAPER_PROTOCOL, PaperProtocol
from llm_aai.script import format_script
from llm_aai.sim import Simulator
from llm_aai.sim.simulator import PHYSICS_BUILDS


@dataclass(frozen=True)
class OracleEpisode:
    """How an oracle episode went.

    Attributes:
        reward: the episode's return.
        passed: ``reward >= pass_mark`` (the runner's rule).
        pass_mark: the mark it was held to.
        steps: AAI steps the episode took (initial no-ops and run-out included).
        scripts: scripts sent (per-frame mode: plans made).
        searched: simulated AAI steps the search took.
        search_seconds: wall time of the search and play (this process).
        end_reason: the simulator's end reason, or ``"time_not_up"`` if the clock never ran
            out (an arena with no time limit).
        texts: the scripts sent, in order (empty in per-frame mode).
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
                        protocol: PaperProtocol = PAPER_PROTOCOL, *,
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
    sim = Simulator(render=False, physics_build=physics_build)
    sim.load(placed, np.random.default_rng(settings.seed))
    steps = 0
    noops = protocol.steps_after_reset + (protocol.initial_observations
                                          * protocol.noops_after_initial_observation)
    for _ in range(noops):
        if sim.done:
            break
        sim.step(0, 0)
        steps += 1
    left = settings.budget
    texts: list[str] = []
    plans = 0
    hint: list[tuple[int, int]] | None = None
    while not sim.done:
        cap = protocol.max_scripts  # None: no cap
        if not settings.per_frame and cap is not None and plans >= cap:
            break
        seeded = SearchSettings(settings.budget, settings.per_frame, settings.seed + plans,
                                settings.pass_mark)
        plan = plan_script(sim, seeded, max(left, 0), hint)
        left -= plan.searched
        plans += 1
        if settings.per_frame:
            chunk = plan.actions
            if not chunk:  # nothing more to search with: wait for the clock
                chunk = [WAIT] * protocol.run_out_max_steps
        else:
            chunk = plan.actions[:500]
            script = to_script(chunk, describe(plan, len(chunk)))
            texts.append(format_script(script))
            chunk = script.actions()
        for move, turn in chunk:
            if sim.done:
                break
            sim.step(move, turn)
            steps += 1
        hint = plan.actions[len(chunk):] or None
        if settings.per_frame and not plan.actions:
            break
    if not sim.done and protocol.run_out_clock:
        for _ in range(protocol.run_out_max_steps):
            if sim.done:
                break
            sim.step(0, 0)
            steps += 1
    reward = sim.total_reward
    return OracleEpisode(
        reward=round(reward, 6), passed=reward >= settings.pass_mark,
        pass_mark=settings.pass_mark, steps=steps, scripts=plans,
        searched=settings.budget - left, search_seconds=round(time.process_time() - started, 3),
        end_reason=sim.end_reason or "time_not_up", texts=tuple(texts))
