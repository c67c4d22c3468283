"""Agents and jobs for the Ray run's fault tests (module level: Ray workers import them by name).

Each agent is the heuristic agent with one thing added on the worker: a mark saying which node
started which episode, or a crash of the worker process in one episode. ``slot_client`` and
``call_through_slots`` make a model call that takes a slot of the cluster's provider slots.
"""

from __future__ import annotations

import os
from pathlib import Path

from llm_aai.agents.heuristic import HeuristicAgent
from llm_aai.llm.client import LiteLLMClient
from llm_aai.llm.types import user_message
from llm_aai.runner.ray_services import cluster_gate


def slot_client(url: str, slots: str) -> LiteLLMClient:
    """A model client at the default timeout whose calls take a slot of the ``ProviderSlots``
    actor ``slots`` (one slot for the endpoint)."""
    client = LiteLLMClient("openai/fake", api_base=url, max_concurrent=1, max_retries=0)
    client.gate = cluster_gate(client, slots)
    return client


def call_through_slots(url: str, slots: str) -> str:
    """One model call through the cluster's slots (as a Ray task: where it is placed)."""
    return slot_client(url, slots).complete([user_message("go")]).text


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
    """Waits as each episode starts (as a model's episode waits on its calls, but without a
    call to Ray that would lend its CPU out meanwhile) until ``together`` episodes wait at once
    or ``timeout_s`` passes, then writes ``<marks>/<seed>``: the most it saw waiting at once
    (itself included; 0 if another saw them all first) and the CPUs Ray reserved for its
    task."""

    def __init__(self, marks: str, together: int, timeout_s: float) -> None:
        super().__init__()
        self.marks = Path(marks)
        self.together = together
        self.timeout_s = timeout_s

    def start_episode(self, system_prompt, seed, prelude=()):
        import time

        import ray

        waiting, everyone = self.marks / f"{seed}.waiting", self.marks / "all-waiting"
        waiting.touch()
        deadline = time.monotonic() + self.timeout_s
        seen = 0
        while not everyone.exists() and time.monotonic() < deadline:
            seen = max(seen, len(list(self.marks.glob("*.waiting"))))
            if seen >= self.together:
                everyone.touch()  # the others may look only once this one has gone on
            time.sleep(0.05)
        cpus = ray.get_runtime_context().get_assigned_resources().get("CPU", 0.0)
        (self.marks / str(seed)).write_text(f"{seen} {cpus}")
        super().start_episode(system_prompt, seed, prelude)
        waiting.unlink()  # after the others saw it: it started no later than they did


class HoggingHeuristic(HeuristicAgent):
    """Holds ``megabytes`` of touched memory for ``seconds`` as each episode starts (for a
    memory monitor to kill its worker), then plays as the heuristic does."""

    def __init__(self, megabytes: int, seconds: float) -> None:
        super().__init__()
        self.megabytes = megabytes
        self.seconds = seconds

    def start_episode(self, system_prompt, seed, prelude=()):
        from tests.execution.jobs import hog

        hog(self.megabytes, self.seconds)
        super().start_episode(system_prompt, seed, prelude)
