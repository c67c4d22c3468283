"""Scheduling a suite: episodes sharing this process's CPU set up one at a time."""

from __future__ import annotations

import threading

from llm_aai.agents.replay import ReplayAgent
from llm_aai.arena import Task
from llm_aai.env import AnimalAIEnv
from llm_aai.logs import RunStore
from llm_aai.perception.observer import IMAGE_ONLY
from llm_aai.prompts import load_prompt
from llm_aai.protocol import EpisodeProtocol
from llm_aai.runner.suite import Suite
from llm_aai.settings import ResolvedRun, RunConfig

SETUP_STEPS = 1 + 3 * 16
EPISODES = 4


class _SetupMonitor:
    """Counts the episodes between their reset and the end of their initial observations."""

    def __init__(self, meet_at_reset: int | None = None):
        self._lock = threading.Lock()
        self._meeting = threading.Barrier(meet_at_reset) if meet_at_reset else None
        self.active = 0
        self.most_active = 0
        self.missed_meetings = 0

    def env(self, in_process: bool) -> AnimalAIEnv:
        monitor, env = self, AnimalAIEnv(resolution=64)
        env.backend.simulates_in_process = in_process
        reset, play = env.reset, env.play
        played = [0]

        def monitored_reset(**kwargs):
            with monitor._lock:
                monitor.active += 1
                monitor.most_active = max(monitor.most_active, monitor.active)
            if monitor._meeting is not None:
                try:  # wait for the other episodes to be inside set-up too
                    monitor._meeting.wait(timeout=2)
                except threading.BrokenBarrierError:
                    with monitor._lock:
                        monitor.missed_meetings += 1
            played[0] = 0
            return reset(**kwargs)

        def monitored_play(actions, **options):
            before = played[0]
            played[0] += len(actions)
            if before < SETUP_STEPS <= played[0]:
                with monitor._lock:
                    monitor.active -= 1
            return play(actions, **options)

        env.reset, env.play = monitored_reset, monitored_play
        return env


def _run(tmp_path, make_arena, monitor: _SetupMonitor, *, in_process: bool) -> list:
    arena = make_arena()
    config = ResolvedRun(RunConfig(
        model="replay", trials=EPISODES, concurrency=EPISODES,
        protocol=EpisodeProtocol(max_scripts=2, run_out_clock=False),
    ), tasks=("01-01-01",))
    envs: list[AnimalAIEnv] = []

    def make_env():
        envs.append(monitor.env(in_process))
        return envs[-1]

    suite = Suite(config, RunStore(tmp_path / "run"), tasks=[Task("01-01-01", 1, "test")],
                  observation=IMAGE_ONLY, make_env=make_env,
                  make_agent=lambda: ReplayAgent(["Turn(30);", "Go(2);"]),
                  prompt=load_prompt("react"), arena_path=lambda task_id: arena)
    try:
        return suite.run()
    finally:
        for env in envs:
            env.close()


def test_episodes_simulated_in_this_process_set_up_one_at_a_time(tmp_path, make_arena):
    monitor = _SetupMonitor()
    results = _run(tmp_path, make_arena, monitor, in_process=True)
    assert len(results) == EPISODES and all(r.scripts_used == 2 for r in results)
    assert monitor.most_active == 1 and monitor.active == 0


def test_episodes_simulated_elsewhere_set_up_together(tmp_path, make_arena):
    # The meeting at reset succeeds only if all episodes can be inside set-up at once.
    monitor = _SetupMonitor(meet_at_reset=EPISODES)
    results = _run(tmp_path, make_arena, monitor, in_process=False)
    assert len(results) == EPISODES
    assert monitor.missed_meetings == 0 and monitor.most_active == EPISODES


def test_the_gate_keeps_a_meeting_at_reset_from_happening(tmp_path, make_arena):
    # So the check above can fail: with the gate, episodes reach the meeting one by one.
    monitor = _SetupMonitor(meet_at_reset=2)
    _run(tmp_path, make_arena, monitor, in_process=True)
    assert monitor.missed_meetings > 0
