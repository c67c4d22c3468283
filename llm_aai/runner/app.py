"""Start or resume a run: the run library behind ``python -m llm_aai.run``.

``start_run(RunConfig(...))`` checks everything a run needs before anything is written (the
task selection, every arena file, the agent and its API key, the prompt, the backend), then
writes the manifest and plays the suite under the run's lock. ``resume_run(run_dir)`` rebuilds
the config from the run's manifest, refuses arena files or prompts that changed since, and
plays what is left. Neither reads command-line arguments: ``llm_aai.cli.run`` turns flags into
a ``RunConfig`` and reports the errors raised here.

This module tells the order of those steps; each step is its own module's: the config resolved
into a plan (``plan``), the checks (``checks``), the run folder (``run_dirs``), the manifest
(``manifest``), the prices (``prices``), the env (``run_env``), the executors (``executors``),
the progress bar (``progress_bar``) and the dry run (``dry_run``).
"""

from __future__ import annotations

import dataclasses
import functools
import socket
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from filelock import FileLock

from llm_aai.agents import Agent, AgentSpec, ReplayExhausted
from llm_aai.execution import LOCAL_NODE
from llm_aai.llm.cache import ResponseCache
from llm_aai.llm.errors import LLMRequestError, UnresolvedHost
from llm_aai.logs.browser import browser_participant, continue_in_browser
from llm_aai.logs.schema import EpisodeResult, RunManifest, SchemaError
from llm_aai.logs.store import RunStore
from llm_aai.runner.budget import BUDGET
from llm_aai.runner.checks import (
    check_arenas_unchanged,
    check_prompt_unchanged,
    check_routing_vouched,
    check_same_run,
)
from llm_aai.runner.conversation import ConversationError
from llm_aai.runner.dry_run import estimate_run
from llm_aai.runner.episode import EpisodeRunner, EpisodeSpec
from llm_aai.runner.errors import RunError, RunInterrupted
from llm_aai.runner.executors import SUITES
from llm_aai.runner.manifest import (
    build_manifest,
    record_cache_use,
    record_lost_input,
    with_calls_made_elsewhere,
)
from llm_aai.runner.plan import (
    Plan,
    make_plan,
    resolve_config,
    resolve_tasks,
    resolve_tasks_and_prompt,
)
from llm_aai.runner.progress_bar import open_bar, update_bar
from llm_aai.runner.run_dirs import (
    check_run_dir,
    check_run_location,
    config_of,
    create_run,
    holds_a_run,
    locked,
    read_run_manifest,
    storage_errors,
    take_lock,
    unused_run_dir,
)
from llm_aai.runner.run_env import make_env
from llm_aai.runner.suite import Suite, episode_id
from llm_aai.settings import ResumeOverrides, RunConfig, default_run_id

# RunError, RunInterrupted, estimate_run and resolve_tasks live in errors, dry_run and plan;
# they are named here too, where their callers import them from
__all__ = ["RESULTS_DIR", "OpenRun", "RunError", "RunInterrupted", "RunOutcome",
           "check_resumable", "estimate_run", "open_run", "resolve_tasks", "resume_run",
           "run_config_of", "start_run"]


RESULTS_DIR = Path("results")
"""Where ``start_run`` makes run directories unless told otherwise."""


@dataclass(frozen=True)
class RunOutcome:
    """What one invocation of a run did.

    Attributes:
        run_dir: the run's directory (its manifest, episodes and summary).
        results: the episodes this invocation finished, in the order they finished.

    """

    run_dir: Path
    results: list[EpisodeResult]


def start_run(config: RunConfig, *, out: str | Path = RESULTS_DIR, run_id: str | None = None,
              show_progress: bool = True) -> RunOutcome:
    """Start a new run in ``out/run_id`` (by default ``out/<time>_<model>``) and play it.

    Raises:
        ConfigError: the config breaks a requirement of its agent or prompt (the field named).
        RunError: the config cannot run (the message says why), the directory holds a run
            already, or another process holds it.
        RunInterrupted: Ctrl-C; finished episodes are kept for ``resume_run``.

    """
    if config.arenas_dir is not None:  # the manifest must name the folder from anywhere
        config = dataclasses.replace(config, arenas_dir=Path(config.arenas_dir).resolve())
    if config.variants is not None:
        config = dataclasses.replace(config, variants=Path(config.variants).resolve())
    out = Path(out)
    check_run_location(out, run_id)
    config, tasks, arena_paths, agent, prompt = resolve_config(config)
    plan = make_plan(config, tasks, arena_paths, agent, prompt)
    run_dir = out / run_id if run_id else unused_run_dir(out, default_run_id(config.model))
    if holds_a_run(run_dir):
        raise RunError(f"{run_dir} already exists; use --resume {run_dir} to continue it")
    create_run(run_dir, build_manifest(run_dir.name, plan))
    print(f"model: {agent.label}", file=sys.stderr)  # what an alias means, once it runs
    store = RunStore(run_dir, config.frames)
    with locked(store), storage_errors(run_dir):
        return RunOutcome(run_dir, _run_suite(plan, store, show_progress))


class OpenRun:
    """A run whose episodes another scheduler plays one by one, each with its own agent.

    ``start_run`` schedules a run's episodes itself; a driver with its own scheduler (an
    Inspect eval plays one sample at a time, each with the model it was given) opens the run
    with ``open_run`` and calls ``play`` per episode. The manifest, the episode logs, the
    results and the summary are the ones ``start_run`` writes, so ``analyze``, ``replay`` and
    ``view`` read them alike. The open run holds the run's lock until ``close``, as
    ``start_run`` holds it while it plays: a second process is refused rather than writing
    the same episodes.
    """

    def __init__(self, plan: Plan, store: RunStore, lock: FileLock | None = None):
        self._plan = plan
        self.store = store
        self._suite = Suite(plan.run, store, tasks=plan.tasks, observation=plan.observation,
                            make_env=lambda: make_env(plan.config),
                            make_agent=plan.agent.create, prompt=plan.prompt,
                            arena_path=plan.arena_paths.__getitem__)
        self._specs = {spec.episode_id: spec for spec in self._suite.pending()}
        self._finished = {eid: result for eid, result in store.finished_results().items()
                          if eid not in self._specs}
        self._summary_lock = threading.Lock()
        self._lock = lock
        self._state = threading.Lock()
        self._playing = 0
        self._closed = False

    @property
    def run_dir(self) -> Path:
        """The run's directory."""
        return self.store.root

    @property
    def config(self) -> RunConfig:
        """The run's settings."""
        return self._plan.config

    @property
    def busy(self) -> bool:
        """Whether an episode is being played (the run cannot be closed then)."""
        return self._playing > 0

    @property
    def closed(self) -> bool:
        """Whether ``close`` released the run (it plays no more episodes)."""
        return self._closed

    def spec(self, task_id: str, trial: int) -> EpisodeSpec:
        """The episode of ``task_id``'s trial ``trial`` (its seed, arena and pass mark).

        Raises:
            RunError: the run has no such episode (a task it did not select, or a trial
                beyond its ``trials``), or it is played already.

        """
        found = self._specs.get(episode_id(task_id, trial))
        if found is None:
            raise RunError(f"{self.run_dir}: no episode left to play for task {task_id} trial "
                           f"{trial} (the run selects {len(self._plan.run.tasks)} tasks x "
                           f"{self._plan.config.trials} trials)")
        return found

    def finished(self, task_id: str, trial: int) -> EpisodeResult | None:
        """The result of ``task_id``'s trial ``trial`` once it is sealed (then or since)."""
        return self._finished.get(episode_id(task_id, trial))

    def play(self, spec: EpisodeSpec, agent: Agent) -> EpisodeResult:
        """Play one episode with ``agent`` in a fresh env, log it, and update the summary.

        The episode is played by the runner's ``EpisodeRunner`` (the same conversation and
        protocol as ``start_run``); it blocks, so an async driver calls it from a thread. An
        earlier attempt that did not finish (its driver stopped, or retries the episode) is
        set aside as ``<episode>.attempt-N`` if it called the model, as a resumed run does:
        what it paid for stays on disk.

        Raises:
            RunError: the run was closed.

        """
        with self._state:
            if self._closed:
                raise RunError(f"{self.run_dir} was closed: open it again to play in it")
            self._playing += 1
        try:
            return self._play(spec, agent)
        finally:
            with self._state:
                self._playing -= 1

    def _play(self, spec: EpisodeSpec, agent: Agent) -> EpisodeResult:
        config = self._plan.config
        attempt = self.store.set_aside_earlier_attempt(spec.episode_id) + 1
        env = make_env(config)
        writer = self.store.start_episode(spec.episode_id)
        try:
            runner = EpisodeRunner(env, agent, self._plan.prompt, config.protocol,
                                   config.script_mode, modes=config.modes,
                                   observation=self._plan.observation)
            result = runner.run(spec, writer)
        except BaseException:
            writer.close()
            raise
        finally:
            env.close()
        result = dataclasses.replace(result, attempts=attempt, node_id=LOCAL_NODE,
                                     host=socket.gethostname())
        writer.finish(result)
        # sealed: a driver that retries its sample (the summary below failed, or a later
        # step of its own) scores it from here rather than finding no episode left to play
        self._finished[spec.episode_id] = result
        del self._specs[spec.episode_id]
        with self._summary_lock:
            self.store.write_summary()
        return result

    def close(self) -> None:
        """Release the run's lock; the run plays no more episodes (closing twice is nothing).

        Raises:
            RunError: an episode is being played.

        """
        with self._state:
            if self._playing:
                raise RunError(f"{self.run_dir}: {self._playing} episodes are being played; "
                               "close the run once they end")
            if self._closed:
                return
            self._closed = True
        if self._lock is not None:
            self._lock.release()


def open_run(config: RunConfig, run_dir: str | Path, *, agent: AgentSpec,
             resume: bool = False, calls: Mapping[str, Any] | None = None) -> OpenRun:
    """Check ``config`` as ``start_run`` does, write the manifest in ``run_dir``, and open it.

    The open run holds the run's lock until it is closed (``OpenRun.close``; the lock goes
    with the process too).

    Args:
        config: the run's settings (``config.model`` names the model as the driver knows it).
        run_dir: a new or empty directory; with ``resume``, also one this run was opened in.
        agent: how the agent is described in the manifest (the driver gives each episode
            its own agent to ``OpenRun.play``).
        resume: continue the run ``run_dir`` holds if it was opened with the same settings
            (its config, tasks, agent and seeds; its arena files and prompt): its finished
            episodes are kept, and one that did not finish is set aside as an attempt when it
            is played again.
        calls: for a driver whose own framework calls the model (Inspect's provider), what
            the calls were made with; the manifest records it and marks the settings of our
            model client and scheduler not applicable (``with_calls_made_elsewhere``).

    Raises:
        ConfigError: the config breaks a requirement of its agent or prompt (the field named).
        RunError: the config cannot run; ``run_dir`` holds a run already (without
            ``resume``) or a run of other settings; or another process holds the run.

    """
    if config.arenas_dir is not None:
        config = dataclasses.replace(config, arenas_dir=Path(config.arenas_dir).resolve())
    check_run_dir(Path(run_dir))
    if config.modes.across_tasks:
        raise RunError("context across-tasks plays a trial's tasks in one conversation; a "
                       "driver that plays one episode at a time cannot run it")
    config, tasks, arena_paths, prompt = resolve_tasks_and_prompt(config)
    plan = make_plan(config, tasks, arena_paths, agent, prompt)
    run_dir = Path(run_dir)
    manifest = build_manifest(run_dir.name, plan)
    if calls is not None:
        manifest = with_calls_made_elsewhere(manifest, calls)
    store = RunStore(run_dir, config.frames)
    continued = holds_a_run(run_dir)
    if continued and not resume:
        raise RunError(f"{run_dir} already exists and is not empty; choose a new directory")
    if not continued:
        create_run(run_dir, manifest)
    lock = take_lock(store)
    try:
        if continued:
            with storage_errors(run_dir):
                _continue(store, manifest, plan)
        # listing the episodes reads the arenas and results: one unreadable by now (removed
        # since the checks) fails here, and the lock goes with it
        return OpenRun(plan, store, lock)
    except BaseException:
        lock.release()
        raise


def _continue(store: RunStore, manifest: RunManifest, plan: Plan) -> None:
    """Check that the run in ``store`` is the one ``manifest`` describes, and tidy it.

    As ``resume_run`` does: damaged results and a killed writer's temporary files are set
    aside or removed; the unfinished episodes are set aside when they are played again.
    """
    run_dir = store.root
    recorded = read_run_manifest(run_dir)
    check_arenas_unchanged(run_dir, recorded, plan.arena_paths)
    check_prompt_unchanged(run_dir, recorded, plan.prompt)
    check_same_run(run_dir, recorded, manifest)
    _tidy(store)


def _tidy(store: RunStore) -> None:
    """Make a run being continued ready to play, as every way of continuing one does.

    Its episode folders checked, a killed writer's temporary files removed, unreadable
    results set aside (each said on stderr).
    """
    try:
        store.check_episode_folders()
    except SchemaError as error:
        raise RunError(str(error)) from None
    store.remove_stale_temporaries()
    for note in store.set_aside_unreadable_results():
        print(f"warning: {note}", file=sys.stderr)


def resume_run(run_dir: str | Path, overrides: ResumeOverrides | None = None, *,
               show_progress: bool = True) -> RunOutcome:
    """Play what is left of a run, with its recorded settings and the overrides given.

    Episodes sealed as infrastructure failures are played again; the rest that are sealed
    are kept. Runs written by earlier versions (whose manifest recorded the command line)
    resume too.

    Raises:
        RunError: not a run directory, a malformed manifest, a routing setting (``--api-base``,
            ``--ray-address``, ``--unity-build``) taken from a manifest this user's mark does
            not vouch for (``routing``), arena files or a prompt that differ from the run's,
            or another process holds the run.
        RunInterrupted: Ctrl-C.

    """
    run_dir = Path(run_dir)
    manifest = read_run_manifest(run_dir)
    check_not_played_in_browser(run_dir, manifest)
    overrides = overrides or ResumeOverrides()
    recorded = config_of(manifest, run_dir)
    config = overrides.apply(recorded)
    check_routing_vouched(run_dir, manifest, recorded, config, overrides)  # before any call
    config, tasks, arena_paths, agent, prompt = resolve_config(config)
    check_arenas_unchanged(run_dir, manifest, arena_paths)
    check_prompt_unchanged(run_dir, manifest, prompt)
    plan = make_plan(config, tasks, arena_paths, agent, prompt)
    with locked(RunStore(run_dir, config.frames)) as store, storage_errors(run_dir):
        _tidy(store)
        return RunOutcome(run_dir, _run_suite(plan, store, show_progress))


def check_resumable(run_dir: str | Path) -> None:
    """Refuse, before anything is touched, a run ``resume_run`` would refuse for its player.

    Raises:
        RunError: not a run directory, or a run played in the browser (see
            ``check_not_played_in_browser``).

    """
    check_not_played_in_browser(Path(run_dir), read_run_manifest(Path(run_dir)))


def check_not_played_in_browser(run_dir: Path, manifest: RunManifest) -> None:
    """Refuse to resume a run a person played in the browser (``logs.browser``).

    Raises:
        RunError: it was; the message says how to continue it there.

    """
    played = browser_participant(manifest.agent)
    if played is not None:
        raise RunError(f"{run_dir} was played in the browser by participant {played[0]!r} "
                       f"({played[1]!r} interface); --resume does not continue it: "
                       + continue_in_browser(run_dir, *played))


def run_config_of(run_dir: str | Path) -> RunConfig:
    """The config a run was started with (what ``resume_run`` continues).

    Raises:
        RunError: not a run directory, or a manifest that does not hold a config.

    """
    return config_of(read_run_manifest(Path(run_dir)), Path(run_dir))


def _run_suite(plan: Plan, store: RunStore, show_progress: bool) -> list[EpisodeResult]:
    """Play the pending episodes and tell the user why the run stopped early, if it did."""
    run_dir = store.root
    options = plan.config.model_options
    if plan.config.cache_dir and plan.agent.kind == "model" and options.temperature != 0:
        print(f"warning: --cache answers only requests at temperature 0; at temperature "
              f"{options.temperature:g} every request goes to the model", file=sys.stderr)
    suite = SUITES[plan.config.executor](
        plan.run, store, tasks=plan.tasks, observation=plan.observation,
        make_env=functools.partial(make_env, plan.config),
        make_agent=plan.agent.create,
        prompt=plan.prompt,
        arena_path=plan.arena_paths.__getitem__,
        on_result=None,
        prices=plan.prices,
        cache=ResponseCache(plan.config.cache_dir) if plan.config.cache_dir else None,
    )
    try:
        pending = suite.pending()
        if plan.config.modes.across_tasks:
            suite.conversations()  # a conversation that cannot go on stops the run here
    except ConversationError as error:
        raise RunError(f"{run_dir}: {error}") from error
    bar = open_bar(len(pending), show_progress)
    suite.on_result = lambda result, progress: update_bar(bar, progress,
                                                          plan.run.cost_known, suite.cache)
    try:
        results = suite.run()
    except LLMRequestError as error:  # every later call would be refused the same way
        what = ("the model's host name has no address" if isinstance(error, UnresolvedHost)
                else "the model refused a request")
        raise RunError(
            f"{what}, so the run stopped: {error}\n"
            f"finished episodes are kept in {run_dir}; once the cause is fixed (key, quota, "
            f"server) continue with --resume {run_dir}") from error
    except ReplayExhausted as error:  # a scripts file shorter than the episode, or divergence
        raise RunError(
            f"{error}. A logged episode replayed in another world (an unfinished one, or "
            f"other settings) diverges; a scripts file needs one script per turn the episode "
            f"plays (up to --max-scripts), and python -m llm_aai.play plays a few. Finished "
            f"episodes are kept in {run_dir}") from error
    except KeyboardInterrupt:
        raise RunInterrupted(
            f"finished episodes are kept in {run_dir}; the ones in flight were stopped and "
            f"will be rerun; continue with --resume {run_dir}") from None
    finally:
        bar.close()
        if suite.cache is not None:
            record_cache_use(store, suite.cache)
        record_lost_input(store, suite.lost_input.record())
    not_started = len(pending) - len(results)
    if suite.stopped_by_failures and not_started:
        print(f"stopped: the last {suite.failed_in_a_row} episodes were lost to infrastructure "
              f"errors (last: {results[-1].infra_error}); {not_started} episodes were not "
              f"started. Once the model is reachable, continue with --resume {run_dir}",
              file=sys.stderr)
    stopped = sum(r.end_reason == BUDGET for r in results)
    if suite.stopped_by_budget and (not_started or stopped):
        halted = (f", and {stopped} were stopped before a model call that could pass it"
                  if stopped else "")
        print(f"budget reached: the run has cost ${suite.progress.cost_usd:.2f} of "
              f"${plan.config.budget_usd:.2f}; {not_started} episodes were not started{halted}. "
              f"Continue with --resume {run_dir} --budget-usd <more>", file=sys.stderr)
    return results
