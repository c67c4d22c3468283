"""Agents for the Ray run's fault tests (module level: Ray workers import them by name).

Each is the heuristic agent with one thing added on the worker: a mark saying which node
started which episode, or a crash of the worker process in one episode.
"""

from __future__ import annotations

import os
from pathlib import Path

from llm_aai.agents.heuristic import HeuristicAgent


class MarkingHeuristic(HeuristicAgent):
    """Writes ``<marks>/<seed>.<node id>`` as each episode starts."""

    def __init__(self, marks: str) -> None:
        super().__init__()
        self.marks = Path(marks)

    def start_episode(self, system_prompt, seed, prelude=()):
        import ray

        node = ray.get_runtime_context().get_node_id()
        (self.marks / f"{seed}.{node}").touch()
        super().start_episode(system_prompt, seed, prelude)


class CrashingHeuristic(HeuristicAgent):
    """Kills its worker process at the start of the episode of seed ``doomed_seed`` (a
    segmentation fault's effect), tallying each crash in ``tally``."""

    def __init__(self, doomed_seed: int, tally: str) -> None:
        super().__init__()
        self.doomed_seed = doomed_seed
        self.tally = tally

    def start_episode(self, system_prompt, seed, prelude=()):
        if seed == self.doomed_seed:
            with open(self.tally, "a") as handle:
                handle.write("crash\n")
            os._exit(1)
        super().start_episode(system_prompt, seed, prelude)


class WaitingHeuristic(HeuristicAgent):
    """Waits ``wait_s`` seconds as each episode starts (as a model's episode waits on its
    calls, but without a call to Ray that would lend its CPU out meanwhile), and writes
    ``<marks>/<seed>``: when the wait began and ended (``time.time``) and the CPUs Ray
    reserved for the episode's task."""

    def __init__(self, marks: str, wait_s: float) -> None:
        super().__init__()
        self.marks = Path(marks)
        self.wait_s = wait_s

    def start_episode(self, system_prompt, seed, prelude=()):
        import time

        import ray

        began = time.time()
        time.sleep(self.wait_s)
        cpus = ray.get_runtime_context().get_assigned_resources().get("CPU", 0.0)
        (self.marks / str(seed)).write_text(f"{began} {time.time()} {cpus}")
        super().start_episode(system_prompt, seed, prelude)
