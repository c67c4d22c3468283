"""A run: tasks x trials scheduled on an executor, logged into one resumable directory.

Each episode is a job, except with ``--context across-tasks``: then each trial's
conversation is a job (``llm_aai.runner.conversation``), whose tasks run one after another
and are recorded as each ends; conversations run in parallel.
"""

from __future__ import annotations

import dataclasses
import socket
import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llm_aai.arena import Task, load_config
from llm_aai.arena.catalog import pass_mark_of
from llm_aai.execution import LOCAL_NODE
from llm_aai.llm.cache import CachedClient, ResponseCache
from llm_aai.llm.lost_input import InputCheckedClient, LostInputWatch, image_token_floor
from llm_aai.llm.pricing import Prices, image_token_estimate
from llm_aai.logs.schema import EpisodeResult, charged_cost
from llm_aai.logs.store import RERUN_END_REASONS, RunStore
from llm_aai.perception.observer import ObservationMode
from llm_aai.runner.budget import BUDGET, BudgetedClient, BudgetGate
from llm_aai.runner.conversation import (
    Conversation,
    check_histories,
    context_of,
    plan_conversations,
)
from llm_aai.runner.episode import (
    ConversationContext,
    EpisodeCancelled,
    EpisodeRunner,
    EpisodeSpec,
    episode_id,
)
from llm_aai.runner.thread_pool import Executor, ThreadExecutor
from llm_aai.settings import ResolvedRun, episode_seed

__all__ = ["Progress", "Suite", "episode_id", "episode_seed", "equip_agent"]


def equip_agent(agent: Any, *, budget: Any, prices: Prices | None, resolution: int,
                cache: Any, lost_input: LostInputWatch) -> Any:
    """An agent whose model calls are checked, budgeted and cached as the run asks.

    Each reply is checked for lost input (innermost: a cached reply counts no tokens to
    check); with a budget and known prices every call reserves its estimate first; at
    temperature 0 a cached reply is looked up before that (a hit is free). Module level, so
    that a worker on another machine equips its agent the same way (with the cluster's
    budget and cache).
    """
    client = getattr(agent, "client", None)
    if client is not None:
        agent.client = InputCheckedClient(client, lost_input)
    if budget is not None and prices is not None and client is not None:
        agent.client = BudgetedClient(agent.client, budget, prices,
                                      image_token_estimate(resolution))
    if cache is not None and client is not None and getattr(client, "temperature", None) == 0:
        agent.client = CachedClient(agent.client, cache)
    return agent


@dataclass
class Progress:
    """Live totals of the run for the progress bar and the budget (changed under the suite's lock).

    Tokens and cost count every sealed attempt, from earlier invocations too (not an attempt
    interrupted before it was sealed). The cost is what the budget counts: the calls' known
    costs and the estimates charged for calls sent without a usable reply (``charged_cost``).
    """

    done: int = 0
    passed: int = 0
    infra_failures: int = 0
    tokens: int = 0
    cost_usd: float = 0.0

    def add(self, result: EpisodeResult) -> None:
        """Count one finished episode."""
        self.done += 1
        self.passed += int(result.passed)
        self.infra_failures += int(result.end_reason == "infrastructure")
        self.tokens += result.input_tokens + result.output_tokens
        self.cost_usd += charged_cost(result)


class Suite:
    """Schedules every (task, trial) episode, relaunching infrastructure failures."""

    def __init__(
        self,
        run: ResolvedRun,
        store: RunStore,
        *,
        tasks: Sequence[Task],
        observation: ObservationMode,
        make_env: Callable[[], Any],
        make_agent: Callable[[], Any],
        prompt: Any,
        arena_path: Callable[[str], Path],
        executor: Executor | None = None,
        on_result: Callable[[EpisodeResult, Progress], None] | None = None,
        prices: Prices | None = None,
        cache: ResponseCache | None = None,
    ):
        self.resolved = run
        self.config = run.config
        self.tasks = list(tasks)
        """The run's tasks (``run.tasks``) with their levels."""
        self.observation = observation
        """What each message shows (the prompt's map with the plan prompt)."""
        self.store = store
        self.make_env = make_env
        self.make_agent = make_agent
        self.prompt = prompt
        self.arena_path = arena_path
        self.executor = executor or ThreadExecutor(self.config.concurrency)
        self.on_result = on_result
        self.progress = Progress()
        self.prices = prices
        """What the model's tokens cost; with a budget, every call reserves its estimate."""
        self.budget: BudgetGate | None = None
        self.cache = cache
        """Answers repeated requests at temperature 0 (checked before the budget: a hit is
        free)."""
        self.lost_input = LostInputWatch(image_token_floor(self.config.resolution))
        """The turns whose server counted far fewer prompt tokens than were sent."""
        self.failed_in_a_row = 0
        self._failing: set[str] = set()
        """Episodes in flight whose last attempt was lost to infrastructure (waiting to be
        relaunched, or sealed but not yet counted in ``failed_in_a_row``)."""
        self.cancel = threading.Event()
        """Set to stop the episodes in flight at their next turn (Ctrl-C sets it)."""
        self._lock = threading.Lock()
        self._local = threading.local()
        self._envs: list[Any] = []
        """Every worker thread's env, closed when the run ends (a Unity player left running
        keeps mlagents' gRPC thread alive, and the interpreter then never exits)."""
        self._setup_lock = threading.Lock()
        self._record_lock = threading.Lock()
        self._results: list[EpisodeResult] = []

    @staticmethod
    def check(config: Any) -> None:
        """Refuse, before the run directory exists, what this suite cannot play.

        Locally nothing is refused; ``RaySuite`` has its limits.
        """

    @staticmethod
    def settle(config: Any, agent_kind: str) -> Any:
        """The config with the settings this suite decides by the agent's kind filled in.

        Locally none; ``RaySuite`` chooses the CPUs an episode reserves.
        """
        return config

    def pending(self) -> list[EpisodeSpec]:
        """Episodes without a sealed result, in task then trial order.

        An episode sealed as an infrastructure failure is pending again: it holds no result
        about the model, and a resumed run is how a user retries it after an outage.
        """
        finished = {eid: result for eid, result in self.store.finished_results().items()
                    if result.end_reason not in RERUN_END_REASONS}
        specs = []
        for task in self.tasks:
            path = self.arena_path(task.task_id)
            pass_mark = pass_mark_of(task.task_id, load_config(path).arena().pass_mark).value
            for trial in range(1, self.config.trials + 1):
                eid = episode_id(task.task_id, trial)
                if eid in finished:
                    continue
                specs.append(EpisodeSpec(eid, task.task_id, task.level, trial,
                                         self.resolved.seed_of(task.task_id, trial),
                                         path, pass_mark,
                                         self.resolved.variants.get(task.task_id)))
        return specs

    def run(self) -> list[EpisodeResult]:
        """Run every pending episode; returns the results of this invocation.

        Interrupted (Ctrl-C), the episodes in flight stop at their next turn and stay
        unfinished, to be rerun on resume; the summary is brought up to date either way.
        """
        self.progress.tokens, self.progress.cost_usd = self.store.spent()
        if self.config.budget_usd is not None:
            self.budget = self._budget_gate(self.config.budget_usd, self.progress.cost_usd)
        self.failed_in_a_row = 0
        self._failing.clear()
        self.cancel.clear()
        self._results = []
        across = self.config.modes.across_tasks
        jobs = self.conversations() if across else self.pending()
        work = self._run_conversation if across else self._run_one
        try:
            for result in self.executor.map_unordered(work, jobs,
                                                      stop=self._should_stop_scheduling,
                                                      on_abort=self.cancel.set):
                if not across:  # a conversation records its tasks as they end
                    self._record(result)
        finally:
            try:  # a full disk fails the summary too: the envs (a Unity player) close anyway
                self.store.write_summary()
            finally:
                self._close_envs()
        return list(self._results)

    def conversations(self) -> list[Conversation]:
        """With ``--context across-tasks``: each trial's conversation with tasks left to play.

        Raises:
            ConversationError: a conversation's finished tasks are not the first ones, or
                one's turn log or result cannot be read.

        """
        conversations = plan_conversations([task.task_id for task in self.tasks],
                                           self.config.trials, self.config.modes.order,
                                           self.config.seed, self.pending())
        check_histories(conversations, self.store.episodes_dir)
        return conversations

    def _record(self, result: EpisodeResult) -> None:
        """Count a sealed episode, bring the summary up to date and report it."""
        with self._record_lock:
            self._results.append(result)
            failed = result.end_reason == "infrastructure"
            with self._lock:  # from failing in flight to lost, in one step
                self._failing.discard(result.episode_id)
                self.failed_in_a_row = self.failed_in_a_row + 1 if failed else 0
                self.progress.add(result)
            self.store.write_summary()
            if self.on_result:
                self.on_result(result, self.progress)

    def _run_conversation(self, conversation: Conversation) -> list[EpisodeResult]:
        """Play a conversation's tasks in order, recording each as it ends.

        It stops before a task when the run is stopping (budget, failures, interruption),
        and after a task that holds no result about the model (an unreachable model, the
        budget): the tasks after it need its outcome, so resume plays them after it.
        """
        results = []
        for spec in conversation.pending:
            if self.cancel.is_set():
                raise EpisodeCancelled(spec.episode_id)
            if self._should_stop_scheduling():
                break
            context = context_of(conversation, spec, self.store.episodes_dir,
                                 self.prompt.messages)
            result = self._run_one(spec, context)
            self._record(result)
            results.append(result)
            if result.end_reason in RERUN_END_REASONS:
                break
        return results

    def _close_envs(self) -> None:
        with self._lock:
            envs, self._envs = self._envs, []
        for env in envs:
            env.close()
        self._local = threading.local()

    @property
    def stopped_by_budget(self) -> bool:
        """True when the budget is spent; pending episodes were then not started."""
        return self._over_budget()

    @property
    def stopped_by_failures(self) -> bool:
        """True when too many episodes in a row were lost to infrastructure.

        Episodes in flight whose last attempt failed count already: at concurrency 4 and a
        threshold of 3, four episodes failing together stop the run at once, rather than
        after three of them have used up their relaunches while new ones kept starting.
        """
        with self._lock:
            failures = self.failed_in_a_row + len(self._failing)
        return failures >= self.config.stop_after_failed_episodes

    def _should_stop_scheduling(self) -> bool:
        return self._over_budget() or self.stopped_by_failures

    def _over_budget(self) -> bool:
        budget = self.config.budget_usd
        refused = self.budget is not None and self.budget.refused
        return refused or (budget is not None and self.progress.cost_usd >= budget)

    def _budget_gate(self, limit_usd: float, spent_usd: float) -> Any:
        """The run's budget for this invocation (a cluster's suite keeps it in an actor)."""
        return BudgetGate(limit_usd, spent_usd)

    def _agent(self):
        """A fresh agent, its model client wrapped for the run.

        Each reply is checked for lost input; with a budget and known prices each call goes
        through the gate; with a cache a repeated request is answered from it.
        """
        return equip_agent(self.make_agent(), budget=self.budget, prices=self.prices,
                           resolution=self.config.resolution, cache=self.cache,
                           lost_input=self.lost_input)

    def _env(self):
        """One env per worker thread, reused across its episodes (switching arena on reset)."""
        env = getattr(self._local, "env", None)
        if env is None:
            env = self._local.env = self.make_env()
            with self._lock:
                self._envs.append(env)
        return env

    def _setup_gate(self, env) -> AbstractContextManager:
        """One episode at a time sets up when the simulation runs in this process.

        Setting up (building the arena, drawing the initial observations) is CPU work that
        threads of one process cannot overlap. Started all at once, sixteen episodes finish
        setting up together, about 2 s later, and then stay in step to the end, where their
        run-outs queue behind each other too. One at a time, the first model request goes out
        after about 0.1 s and the episodes stay staggered. In ``benchmarks.bench_harness``
        (16 episodes at concurrency 16, 1 s model latency) the last run-out used to end 1.1 s
        after the last reply, and 0.15 s after it with the gate. A backend whose world runs
        elsewhere (the Unity player) gets no gate.
        """
        backend = getattr(env, "backend", None)
        in_process = getattr(backend, "simulates_in_process", False)
        return self._setup_lock if in_process else nullcontext()

    def _play_attempt(self, spec: EpisodeSpec, context: ConversationContext | None,
                      attempt: int) -> EpisodeResult:
        """Play one attempt of an episode in this thread and seal it in the run directory."""
        writer = self.store.start_episode(spec.episode_id)
        env = self._env()
        runner = EpisodeRunner(env, self._agent(), self.prompt, self.config.protocol,
                               self.config.script_mode, setup_gate=self._setup_gate(env),
                               should_stop=self.cancel.is_set, modes=self.config.modes,
                               observation=self.observation,
                               context=context)
        try:
            result = runner.run(spec, writer)
        except BaseException:
            writer.close()
            raise
        result = dataclasses.replace(result, attempts=attempt, node_id=LOCAL_NODE,
                                     host=socket.gethostname())
        writer.finish(result)
        return result

    def _run_one(self, spec: EpisodeSpec,
                 context: ConversationContext | None = None) -> EpisodeResult:
        attempt = first_attempt = self.store.set_aside_earlier_attempt(spec.episode_id) + 1
        while True:
            result = self._play_attempt(spec, context, attempt)
            relaunches = attempt - first_attempt
            if result.end_reason == BUDGET:
                return result  # a resumed run with a larger budget plays it again
            if result.end_reason != "infrastructure":
                with self._lock:
                    self._failing.discard(spec.episode_id)
                return result
            with self._lock:
                self._failing.add(spec.episode_id)
            if relaunches >= self.config.max_relaunches or self.stopped_by_failures:
                return result  # the run is stopping: resume retries it
            # the failed attempt keeps its result (and what it cost) beside the retry
            self.store.keep_failed_attempt(spec.episode_id, attempt)
            with self._lock:
                self.progress.tokens += result.input_tokens + result.output_tokens
                self.progress.cost_usd += charged_cost(result)
            if self.cancel.wait(self.config.relaunch_delay_s * (relaunches + 1)):
                raise EpisodeCancelled(spec.episode_id)  # interrupted: no new attempt
            attempt += 1
