"""A run's episodes as Ray tasks (``run --executor ray``), the run directory written by the driver.

The suite (``llm_aai.runner.suite``) schedules, relaunches, counts failures and keeps the
summary; ``RaySuite`` changes only where an attempt plays. Each attempt is one Ray task: the
worker builds the env and the agent, plays the episode through the same ``EpisodeRunner``
(and so the same protocol ``Episode`` loop) as a local run, writing its turns and frames into
a scratch folder of its own node, and returns them with the result. The driver alone writes
the run directory: it opens the episode folder, writes the frames and turns it got back and
seals the result, as a local attempt does. So an episode in flight when the run stops, or lost
with its node, leaves nothing in the run directory, and ``--resume`` works as locally.

What holds across the cluster:

* the budget: one ``BudgetLedger`` actor (``llm_aai.runner.ray_budget``) every call on every
  node reserves with;
* the response cache and the provider's limits (calls in flight, per minute, a 429's pause):
  actors on the driver's node
  (``llm_aai.runner.ray_services``), so no node needs the driver's disk;
* ``--stop-after-failures``, the relaunches and the summary: counted by the driver as locally;
* ``--context across-tasks``: a driver thread per conversation plays its tasks in order as
  locally, each task's context shipped with the earlier tasks' frames (``ShippedContext``);
* a node lost mid-episode: Ray replays the task on another node (``RETRIES`` times at most);
  the driver sees one result, so no episode is lost or written twice. A task that kills its
  worker every time is sealed as an infrastructure failure naming the crash, which the run's
  relaunch count bounds and ``--resume`` plays again;
* an interrupt (Ctrl-C, SIGTERM): the driver's threads stop waiting, end their tasks (their
  workers with them; never one whose reply may be on its way, which can abort the driver in
  Ray's core: ``llm_aai.execution.ray_stop``) and the run stops as a local one does.
"""

from __future__ import annotations

import dataclasses
import socket
import tempfile
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from llm_aai.execution.executor import WORKER_DIED, describe_error
from llm_aai.execution.ray_executor import (
    JOB_CPUS,
    RETRIES,
    RayUnavailable,
    check_address,
    connect,
    import_ray,
    lost_worker,
)
from llm_aai.execution.ray_stop import gated_call, start_gate, stop_tasks
from llm_aai.frames import FrameFormat
from llm_aai.llm import provider_limits
from llm_aai.llm.lost_input import LostInputWatch, image_token_floor
from llm_aai.llm.pricing import Prices
from llm_aai.logs.schema import EpisodeResult, TurnRecord
from llm_aai.logs.store import EpisodeWriter
from llm_aai.perception.observer import ObservationMode
from llm_aai.protocol import EpisodeProtocol
from llm_aai.protocol.modes import ModeSettings
from llm_aai.runner.budget import BudgetGate
from llm_aai.runner.episode import (
    ConversationContext,
    EpisodeCancelled,
    EpisodeRunner,
    EpisodeSpec,
)
from llm_aai.runner.errors import RunError
from llm_aai.runner.ray_budget import RayBudgetGate
from llm_aai.runner.ray_services import (
    CacheServer,
    ProviderSlots,
    RayResponseCache,
    actor_name,
    cluster_gate,
    start_on_driver,
)
from llm_aai.runner.shipped_context import ShippedContext
from llm_aai.runner.suite import Suite, equip_agent
from llm_aai.settings import ConfigError

__all__ = ["EPISODE_CPUS", "MODEL_EPISODE_CPUS", "POLL_S", "STOP_LENDING_S", "EpisodeKit",
           "PlayedEpisode", "RaySuite", "play_gated", "play_remotely"]

POLL_S = 0.2
"""How often a driver thread waiting on its episode's task looks for an interrupt."""

STOP_LENDING_S = 5.0
"""How long a stop waits for the provider slots to stop lending (an answer takes milliseconds)."""

MODEL_EPISODE_CPUS = 0.25
"""The CPUs a model's episode reserves unless ``--ray-episode-cpus`` says otherwise.

A model's episode mostly waits on its model: measured, 2.8 CPU s of simulation, rendering
and harness per 30-script episode against about 150 s of waiting (30 calls at some 5 s each),
about 2 % of a CPU on average. A whole CPU per episode holds a cluster of C CPUs to about
C episodes in flight, each CPU idle 98 % of the time (a few more start, late: Ray lends a
task's CPU while it waits in ``ray.get``, as it does on the provider-slot actor before each
call). The reservation is not set at that 2 %
(50 episodes per CPU) because the work comes in bursts, a script's simulation and frames
at once, which episodes whose calls return together would play on the same core, and
because each episode in flight holds a worker process with its own simulator; a quarter
lets one CPU carry 4 episodes (a 2-CPU node 8), and ``--concurrency`` and the provider's
limits bound the episodes in flight in any case. A run whose model answers slowly can go
lower (``--ray-episode-cpus 0.05``: 20 per CPU). Measured on two one-CPU nodes, 8 model
episodes at ``--concurrency 8``: 86 s at 1 CPU each, 43 s at 0.25 (docs/ray.md)."""

EPISODE_CPUS = {"builtin": JOB_CPUS, "model": MODEL_EPISODE_CPUS}
"""An agent's kind (``AgentSpec.kind``) -> the CPUs its episode reserves by default: a built-in
agent (the heuristic, the oracle's search) simulates flat out, like an audit episode."""


@dataclass(frozen=True)
class EpisodeKit:
    """Everything a worker needs to play any episode of the run (put in Ray's store once).

    Attributes:
        make_env: builds the run's env (picklable: a module-level function and its config).
        make_agent: builds a fresh agent.
        budget, cache, slots_actor: the cluster's budget gate, response cache and provider
            gates (each by its actor's name; None when the run has none).
    """

    make_env: Callable[[], Any]
    make_agent: Callable[[], Any]
    prompt: Any
    protocol: EpisodeProtocol
    script_mode: str
    modes: ModeSettings
    observation: ObservationMode
    frame_format: FrameFormat
    resolution: int
    prices: Prices | None = None
    budget: RayBudgetGate | None = None
    cache: RayResponseCache | None = None
    slots_actor: str | None = None

    def agent(self, lost_input: LostInputWatch) -> Any:
        """A fresh agent equipped as the local suite equips it, with the cluster's services."""
        agent = self.make_agent()
        client = getattr(agent, "client", None)
        if self.slots_actor is not None and hasattr(client, "gate"):
            client.gate = cluster_gate(client, self.slots_actor)
        return equip_agent(agent, budget=self.budget, prices=self.prices,
                           resolution=self.resolution, cache=self.cache,
                           lost_input=lost_input)


@dataclass(frozen=True)
class PlayedEpisode:
    """What a worker sends back: the episode's result, turns and frames, and where it ran.

    Attributes:
        frames: each frame's path relative to the episode folder -> its encoded bytes.
        lost_input: the turns that lost input (``LostInputWatch.record``); None if none.
    """

    result: EpisodeResult
    turns: tuple[TurnRecord, ...]
    frames: dict[str, bytes]
    node_id: str
    host: str
    lost_input: dict[str, Any] | None = None


class _RecordingWriter(EpisodeWriter):
    """An episode writer in the worker's scratch folder that also keeps what it wrote.

    The frames are files as locally (an LLM agent sends the files the runner saved); the
    turns and the frames' bytes go back to the driver, which writes the run directory.
    """

    def __init__(self, directory: Path, frame_format: FrameFormat):
        super().__init__(directory, frame_format)
        self.turns: list[TurnRecord] = []
        self.frames: dict[str, bytes] = {}

    def save_frame(self, turn: int, index: int, image: np.ndarray) -> str:
        relative = super().save_frame(turn, index, image)
        self.frames[relative] = (self.directory / relative).read_bytes()
        return relative

    def write_turn(self, record: TurnRecord) -> None:
        super().write_turn(record)
        self.turns.append(record)


def play_remotely(kit: EpisodeKit, spec: EpisodeSpec,
                  context: ShippedContext | None = None) -> PlayedEpisode:
    """Play one episode on a Ray worker and return it whole (the worker writes no run file).

    With ``--context across-tasks`` the task comes with its conversation's context, the
    earlier tasks' frames written into the scratch folder for the agent to send again.
    """
    ray = import_ray()
    lost_input = LostInputWatch(image_token_floor(kit.resolution))
    with tempfile.TemporaryDirectory(prefix="llm-aai-episode-") as scratch:
        writer = _RecordingWriter(Path(scratch) / "episode" / spec.episode_id, kit.frame_format)
        env = kit.make_env()
        try:
            runner = EpisodeRunner(env, kit.agent(lost_input), kit.prompt, kit.protocol,
                                   kit.script_mode, modes=kit.modes,
                                   observation=kit.observation,
                                   context=None if context is None
                                   else context.unpack(Path(scratch) / "earlier"))
            result = runner.run(spec, writer)
        finally:
            writer.close()
            env.close()
    return PlayedEpisode(result, tuple(writer.turns), writer.frames,
                         ray.get_runtime_context().get_node_id(), socket.gethostname(),
                         lost_input.record())


def play_gated(gate: Any, token: str, kit: EpisodeKit, spec: EpisodeSpec,
               context: ShippedContext | None = None) -> PlayedEpisode:
    """``play_remotely``, returning only with the run's stop gate's leave."""
    return gated_call(gate, token, play_remotely, (kit, spec, context))


class RaySuite(Suite):
    """A suite whose attempts are Ray tasks, joined to ``config.ray_address`` or a Ray here.

    ``concurrency`` driver threads each wait on one task, so up to ``--concurrency`` episodes
    play at once across the cluster, as many as its CPUs allow at ``--ray-episode-cpus`` each
    (``EPISODE_CPUS``); everything else (relaunches, failure counts, the budget's stop, the
    summary) is the local suite's.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._ray: Any = None
        self._kit_ref: Any = None
        self._remote: Any = None
        self._actors: list[Any] = []
        self._ledger_name: str | None = None
        self._cache_proxy: RayResponseCache | None = None
        self._agent_name: str | None = None
        self._gate: Any = None
        self._slots: Any = None
        self._lending_stopped = False
        self._stop_lock = threading.Lock()

    @staticmethod
    def settle(config: Any, agent_kind: str) -> Any:
        """The config with the CPUs each episode reserves (``EPISODE_CPUS``) unless it has one.

        Decided when the run starts, so the manifest records the value the run played with.
        """
        if config.ray_episode_cpus is not None:
            return config
        return dataclasses.replace(config, ray_episode_cpus=EPISODE_CPUS[agent_kind])

    @staticmethod
    def check(config: Any) -> None:
        """Refuse what a run on Ray cannot do, before its directory exists.

        Raises:
            RayUnavailable: Ray is not installed (the message says how to install it), or
                nothing answers at ``--ray-address`` (``RayUnreachable``).
            ValueError: a mode the remote episodes cannot play (the message says which).
        """
        import_ray()
        check_address(config.ray_address)
        if config.model == "human":
            raise ValueError("--model human asks at this terminal; play it with --executor "
                             "local")

    def run(self) -> list[EpisodeResult]:
        """Run every pending episode on the cluster (see ``Suite.run``)."""
        ray = self._ray = import_ray()
        try:
            started_here = connect(self.config.ray_address, self.config.concurrency)
        except RayUnavailable as error:  # a Ray started here refused as exposed, or gone
            raise RunError(str(error)) from error
        try:
            self._check_episode_cpus()
            self._start_services()
            return super().run()
        finally:
            self._stop_services()
            if started_here:
                ray.shutdown()

    @property
    def episode_cpus(self) -> float:
        """The CPUs each episode's task reserves (a config not settled: a whole one)."""
        cpus = self.config.ray_episode_cpus
        return JOB_CPUS if cpus is None else float(cpus)

    def _check_episode_cpus(self) -> None:
        """Refuse a reservation no node of the cluster can grant: its tasks would never start.

        Raises:
            ConfigError: ``ray_episode_cpus`` above the CPUs of the cluster's largest node.
        """
        largest = max((node["Resources"].get("CPU", 0.0) for node in self._ray.nodes()
                       if node["Alive"]), default=0.0)
        if self.episode_cpus > largest:
            raise ConfigError("ray_episode_cpus", (
                f"must be at most {largest:g}, the CPUs of the cluster's largest node (an "
                f"episode plays on one node), not {self.episode_cpus:g}; nothing was played: "
                f"continue with --resume {self.store.root} and a smaller {{ray_episode_cpus}}"))

    def _start_services(self) -> None:
        """Start the actors this run's episodes use, and nothing else.

        Each actor is a worker process of its own that imports the package (about a CPU
        second), and Ray starts a node's worker processes as many at a time as it has CPUs,
        the actors' with the episodes' (docs/ray.md). So: the provider slots only for an
        agent whose model client takes a provider gate, the cache only with ``--cache``, the
        ledger only with a budget (``_budget_gate``); the stop gate always, as every episode
        returns through it.
        """
        ray = self._ray
        slots = None
        if self._calls_a_provider():
            slots = actor_name("slots")
            self._slots = start_on_driver(ProviderSlots, slots, provider_limits.WINDOW_S)
            self._actors.append(self._slots)
        if self.cache is not None:
            name = actor_name("cache")
            # absolute: the actor's folder is its node's, not this process's (docs/ray.md)
            self._actors.append(start_on_driver(CacheServer, name,
                                                str(self.cache.directory.absolute())))
            self._cache_proxy = RayResponseCache(name, self.cache.directory)
        if self.config.budget_usd is not None:
            self._ledger_name = actor_name("budget")
        kit = EpisodeKit(
            make_env=self.make_env, make_agent=self.make_agent, prompt=self.prompt,
            protocol=self.config.protocol, script_mode=self.config.script_mode,
            modes=self.config.modes, observation=self.observation,
            frame_format=self.store.frame_format, resolution=self.config.resolution,
            prices=self.prices,
            budget=RayBudgetGate(self._ledger_name) if self._ledger_name else None,
            cache=self._cache_proxy, slots_actor=slots)
        self._kit_ref = ray.put(kit)
        self._gate = start_gate(ray)
        self._actors.append(self._gate)
        self._remote = ray.remote(num_cpus=self.episode_cpus, max_retries=RETRIES)(play_gated)

    def _calls_a_provider(self) -> bool:
        """Whether the run's agent has a model client that takes a provider gate.

        The test ``EpisodeKit.agent`` applies on the workers, asked of one agent built here.
        """
        return hasattr(getattr(self.make_agent(), "client", None), "gate")

    def _stop_services(self) -> None:
        """Keep what the actors counted, then end them (a run's actors die with the run)."""
        ray = self._ray
        if isinstance(self.budget, RayBudgetGate):  # the driver reads it after the run
            spent, reserved, refused = self.budget._accounts()
            settled = BudgetGate(self.budget_limit, spent)
            settled.reserved_usd, settled.refused = reserved, refused
            self.budget = settled
        if self._cache_proxy is not None and self.cache is not None:
            hits, misses, failures = self._cache_proxy.counts()
            self.cache.hits += hits
            self.cache.misses += misses
            self.cache.write_failures += failures
            self._cache_proxy = None
        for actor in self._actors:
            ray.kill(actor)
        self._actors.clear()

    @property
    def budget_limit(self) -> float:
        """The run's budget (set whenever a gate exists)."""
        return float(self.config.budget_usd or 0.0)

    def _budget_gate(self, limit_usd: float, spent_usd: float) -> Any:
        gate = RayBudgetGate.start(self._ledger_name or actor_name("budget"), limit_usd,
                                   spent_usd)
        self._actors.append(gate._handle)
        return gate

    def _play_attempt(self, spec: EpisodeSpec, context: ConversationContext | None,
                      attempt: int) -> EpisodeResult:
        """Play an attempt as a Ray task, then write it into the run directory here.

        A conversation's task ships its context with the earlier tasks' frames
        (``ShippedContext``): the worker's node need not see the run directory.
        """
        ray = self._ray
        token = uuid.uuid4().hex
        shipped = None if context is None else ShippedContext.pack(context,
                                                                    self.store.episodes_dir)
        ref = self._remote.remote(self._gate, token, self._kit_ref, spec, shipped)
        try:
            while not ray.wait([ref], timeout=POLL_S)[0]:
                if self.cancel.is_set():
                    raise EpisodeCancelled(spec.episode_id)
            played = ray.get(ref)
        except EpisodeCancelled:
            self._stop_lending()
            stop_tasks(ray, self._gate, {token: ref})
            raise
        except ray.exceptions.RayTaskError as error:  # the episode raised: as locally
            cause = getattr(error, "cause", None)
            raise (cause if isinstance(cause, Exception) else error.as_instanceof_cause()) \
                from None
        except ray.exceptions.RayError as error:
            lost = lost_worker(ray, error)
            if lost is None:
                raise
            return self._seal_crash(spec, attempt, lost, error)
        return self._seal(spec, attempt, played)

    def _stop_lending(self) -> None:
        """A stopping run starts no more model calls (``ProviderSlots.stop_lending``).

        Locally a stopping run's episodes make no call after the stop; here their workers
        are ended, but one could start a call before its end. The first driver thread to
        see the stop tells the provider slots to lend none from then on. An actor that does
        not answer within ``STOP_LENDING_S`` is left: the workers' ends stop their calls.
        """
        with self._stop_lock:
            if self._slots is None or self._lending_stopped:
                return
            self._lending_stopped = True
        ray = self._ray
        try:
            ray.get(self._slots.stop_lending.remote(), timeout=STOP_LENDING_S)
        except (ray.exceptions.RayActorError, ray.exceptions.GetTimeoutError):
            pass

    def _seal(self, spec: EpisodeSpec, attempt: int, played: PlayedEpisode) -> EpisodeResult:
        writer = self.store.start_episode(spec.episode_id)
        try:
            for relative, data in played.frames.items():
                (writer.directory / relative).write_bytes(data)
            for turn in played.turns:
                writer.write_turn(turn)
        except BaseException:
            writer.close()
            raise
        result = dataclasses.replace(played.result, attempts=attempt, node_id=played.node_id,
                                     host=played.host)
        writer.finish(result)
        self.lost_input.add(played.lost_input)  # the run's count, as the manifest keeps it
        return result

    def _seal_crash(self, spec: EpisodeSpec, attempt: int, lost: str,
                    error: Exception) -> EpisodeResult:
        """An attempt whose worker was lost on every try: no result about the model.

        ``lost`` (from ``lost_worker``) says why. Ray replays a crashed worker's task
        ``RETRIES`` times, an out-of-memory one by its own count.
        """
        tries = f" on each of {RETRIES + 1} tries" if lost == WORKER_DIED else ""
        if self._agent_name is None:
            agent = self.make_agent()
            self._agent_name = getattr(agent, "name", type(agent).__name__)
        result = EpisodeResult(
            episode_id=spec.episode_id, task_id=spec.task_id, level=spec.level,
            trial=spec.trial, seed=spec.seed, agent=self._agent_name, passed=False,
            reward=0.0, pass_mark=spec.pass_mark, final_health=0.0, scripts_used=0,
            invalid_replies=0, end_reason="infrastructure", steps=0, cost_usd=None,
            attempts=attempt, parent_task=spec.parent_task,
            infra_error=f"crash: {lost}{tries} ({describe_error(error)[:200]})")
        writer = self.store.start_episode(spec.episode_id)
        writer.finish(result)
        return result
