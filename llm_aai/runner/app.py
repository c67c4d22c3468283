"""Start or resume a run: the run library behind ``python -m llm_aai.run``.

``start_run(RunConfig(...))`` checks everything a run needs before anything is written (the
task selection, every arena file, the agent and its API key, the prompt, the backend), then
writes the manifest and plays the suite under the run's lock. ``resume_run(run_dir)`` rebuilds
the config from the run's manifest, refuses arena files or prompts that changed since, and
plays what is left. Neither reads command-line arguments: ``llm_aai.cli.run`` turns flags into
a ``RunConfig`` and reports the errors raised here.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import platform
import secrets
import shutil
import socket
import subprocess
import sys
import threading
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from filelock import Timeout
from tqdm import tqdm

from llm_aai.agents import Agent, AgentSpec, ReplayExhausted, resolve_agent
from llm_aai.arena import (
    ArenaError,
    Task,
    file_sha256,
    load_config,
    resolve_arena_path,
    select_tasks,
)
from llm_aai.env import AnimalAIEnv
from llm_aai.env.backends.unity import UnityUnavailable
from llm_aai.execution import LOCAL_NODE, RayUnavailable
from llm_aai.llm.cache import ResponseCache
from llm_aai.llm.errors import LLMError, LLMRequestError
from llm_aai.llm.pricing import Prices, litellm_prices
from llm_aai.llm.served import served_models
from llm_aai.logs.schema import SCHEMA_VERSION, EpisodeResult, RunManifest, SchemaError
from llm_aai.logs.store import LOCK, RESULT, RunStore, read_manifest, read_result
from llm_aai.perception.observer import ObservationMode, check_observation
from llm_aai.prompts import Prompt, prompt_spec
from llm_aai.prompts.examples import ExampleError
from llm_aai.prompts.modes import load_prompt_for_mode
from llm_aai.protocol import EpisodeProtocol
from llm_aai.protocol.modes import mode_label
from llm_aai.runner.budget import BUDGET
from llm_aai.runner.conversation import ConversationError, conversation_orders
from llm_aai.runner.episode import EpisodeRunner, EpisodeSpec
from llm_aai.runner.estimate import (
    ASSUMED_REPLY_TOKENS,
    ASSUMED_SCRIPT_STEPS,
    EpisodeShape,
    RunEstimate,
    episode_shape,
    estimate_episodes,
    image_tokens_for,
    measure_observation_texts,
)
from llm_aai.runner.presets import apply_presets
from llm_aai.runner.ray_suite import RaySuite
from llm_aai.runner.suite import Progress, Suite, episode_id, episode_seed
from llm_aai.settings import (
    ResolvedRun,
    ResumeOverrides,
    RunConfig,
    default_run_id,
    settings_of,
)
from llm_aai.sim.builds import game_clock
from llm_aai.sim.simulator import PHYSICS_BUILDS
from llm_aai.variants.index import Variant, VariantIndexError, variant_tasks

__all__ = ["RESULTS_DIR", "OpenRun", "RunError", "RunInterrupted", "RunOutcome", "estimate_run",
           "open_run", "resume_run", "run_config_of", "start_run"]

RESULTS_DIR = Path("results")
"""Where ``start_run`` makes run directories unless told otherwise."""

SUITES: dict[str, type[Suite]] = {"local": Suite, "ray": RaySuite}
"""Where a run's episodes play, by ``--executor``: threads here, or Ray tasks on a cluster."""

TEXT_PROBE_RESOLUTION = 64
"""Frame size of the env a dry run reads maps and descriptions in: the text is the same at
any size (the eye's rays are their own), and small frames draw fastest."""


class RunError(Exception):
    """A problem the user can fix (bad task list, missing key, missing arenas...)."""


class RunInterrupted(RunError):
    """Ctrl-C: finished episodes are kept, the ones in flight are rerun on resume."""


@dataclass(frozen=True)
class RunOutcome:
    """What one invocation of a run did.

    Attributes:
        run_dir: the run's directory (its manifest, episodes and summary).
        results: the episodes this invocation finished, in the order they finished.

    """

    run_dir: Path
    results: list[EpisodeResult]


@dataclass(frozen=True)
class _Plan:
    """A config checked and resolved: what the suite and the manifest are made from."""

    run: ResolvedRun
    tasks: list[Task]
    agent: AgentSpec
    prompt: Prompt
    arena_paths: dict[str, Path]
    observation: ObservationMode
    prices: Prices | None = None
    """What the model's tokens cost; None for a built-in agent or a model without a price."""

    @property
    def config(self) -> RunConfig:
        """The run's config, its presets applied."""
        return self.run.config


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
    _check_run_location(out, run_id)
    config, tasks, arena_paths, agent, prompt = _resolve(config)
    plan = _plan(config, tasks, arena_paths, agent, prompt)
    run_dir = out / run_id if run_id else _unused_run_dir(out, default_run_id(config.model))
    if _holds_a_run(run_dir):
        raise RunError(f"{run_dir} already exists; use --resume {run_dir} to continue it")
    _create_run(run_dir, _manifest(run_dir.name, plan))
    print(f"model: {agent.label}", file=sys.stderr)  # what an alias means, once it runs
    store = RunStore(run_dir, config.frames)
    with _locked(store), _storage_errors(run_dir):
        return RunOutcome(run_dir, _run_suite(plan, store, show_progress))


def _holds_a_run(run_dir: Path) -> bool:
    """Whether ``run_dir`` holds anything but the ``.lock`` an interrupted start once left."""
    return run_dir.is_dir() and any(path.name != LOCK for path in run_dir.iterdir())


def _create_run(run_dir: Path, manifest: RunManifest) -> None:
    """Make the run's folder with its manifest in one step: a folder without one is never seen.

    The manifest is written in a hidden folder beside it, which is then renamed: an
    interruption (Ctrl-C, SIGTERM, kill -9) while the manifest is made (``git`` runs) or
    written leaves no run folder, and the same command starts the run again. An empty folder,
    or one holding only the ``.lock`` of a start interrupted by an earlier version, is taken.
    """
    staging = run_dir.with_name(f".{run_dir.name}.{secrets.token_hex(4)}.creating")
    try:
        run_dir.parent.mkdir(parents=True, exist_ok=True)
        staging.mkdir()  # as any folder (0777 less the umask): colleagues read runs
        RunStore(staging).write_manifest(manifest)
        if run_dir.is_dir() and not _holds_a_run(run_dir):
            (run_dir / LOCK).unlink(missing_ok=True)
        os.rename(staging, run_dir)  # onto an empty folder too; refused if it holds a run
    except OSError as error:
        shutil.rmtree(staging, ignore_errors=True)
        if _holds_a_run(run_dir):  # another start won the race
            raise RunError(f"{run_dir} already exists; use --resume {run_dir} to continue "
                           "it") from error
        raise RunError(f"cannot create the run directory {run_dir}: "
                       f"{error.strerror or error}") from error
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


class OpenRun:
    """A run whose episodes another scheduler plays one by one, each with its own agent.

    ``start_run`` schedules a run's episodes itself; a driver with its own scheduler (an
    Inspect eval plays one sample at a time, each with the model it was given) opens the run
    with ``open_run`` and calls ``play`` per episode. The manifest, the episode logs, the
    results and the summary are the ones ``start_run`` writes, so ``analyze``, ``replay`` and
    ``view`` read them alike.
    """

    def __init__(self, plan: _Plan, store: RunStore):
        self._plan = plan
        self.store = store
        self._suite = Suite(plan.run, store, tasks=plan.tasks, observation=plan.observation,
                            make_env=lambda: _make_env(plan.config),
                            make_agent=plan.agent.create, prompt=plan.prompt,
                            arena_path=plan.arena_paths.__getitem__)
        self._specs = {spec.episode_id: spec for spec in self._suite.pending()}
        self._summary_lock = threading.Lock()

    @property
    def run_dir(self) -> Path:
        """The run's directory."""
        return self.store.root

    @property
    def config(self) -> RunConfig:
        """The run's settings."""
        return self._plan.config

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

    def play(self, spec: EpisodeSpec, agent: Agent) -> EpisodeResult:
        """Play one episode with ``agent`` in a fresh env, log it, and update the summary.

        The episode is played by the runner's ``EpisodeRunner`` (the same conversation and
        protocol as ``start_run``); it blocks, so an async driver calls it from a thread.
        """
        config = self._plan.config
        env = _make_env(config)
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
        result = dataclasses.replace(result, node_id=LOCAL_NODE, host=socket.gethostname())
        writer.finish(result)
        del self._specs[spec.episode_id]
        with self._summary_lock:
            self.store.write_summary()
        return result


def open_run(config: RunConfig, run_dir: str | Path, *, agent: AgentSpec) -> OpenRun:
    """Check ``config`` as ``start_run`` does, write the manifest in ``run_dir``, and open it.

    Args:
        config: the run's settings (``config.model`` names the model as the driver knows it).
        run_dir: a new or empty directory.
        agent: how the agent is described in the manifest (the driver gives each episode
            its own agent to ``OpenRun.play``).

    Raises:
        ConfigError: the config breaks a requirement of its agent or prompt (the field named).
        RunError: the config cannot run, or ``run_dir`` holds a run already.

    """
    if config.arenas_dir is not None:
        config = dataclasses.replace(config, arenas_dir=Path(config.arenas_dir).resolve())
    if config.modes.across_tasks:
        raise RunError("context across-tasks plays a trial's tasks in one conversation; a "
                       "driver that plays one episode at a time cannot run it")
    config, tasks, arena_paths, prompt = _resolve_tasks_and_prompt(config)
    plan = _plan(config, tasks, arena_paths, agent, prompt)
    run_dir = Path(run_dir)
    if _holds_a_run(run_dir):
        raise RunError(f"{run_dir} already exists and is not empty; choose a new directory")
    _create_run(run_dir, _manifest(run_dir.name, plan))
    return OpenRun(plan, RunStore(run_dir, config.frames))


def estimate_run(config: RunConfig, *, script_steps: int = ASSUMED_SCRIPT_STEPS,
                 reply_tokens: int = ASSUMED_REPLY_TOKENS) -> tuple[list[str], RunEstimate]:
    """The plan of a run and what it will ask of its model, without calling or writing anything.

    Checks the config as ``start_run`` does (tasks, arena files, the agent, the prompt). Each
    mode's requests are counted as the mode builds them (``llm_aai.runner.estimate``); the
    map and the words of a text observation are read from each task's start in the
    simulator, which is built for that and nothing else.

    Args:
        config: the run's settings.
        script_steps: the steps a script is assumed to take (the frames ``--observe-every``
            sends with each message).
        reply_tokens: the tokens a reply is assumed to take (sent back in the history).

    Returns:
        The plan's lines (tasks x trials, the model, the mode, the assumptions) and the
        estimate.

    Raises:
        ConfigError: the config breaks a requirement of its agent or prompt (the field named).
        RunError: the config cannot run.

    """
    config, tasks, arena_paths, agent, prompt = _resolve(config, check_key=False)
    prices = _prices(config, agent)
    episodes = len(tasks) * config.trials
    image_tokens = image_tokens_for(agent.describe().get("provider") or "", config.resolution,
                                    own_server=config.model_options.api_base is not None)
    protocol = config.protocol
    observation = _observation(config)
    shapes = (_episode_shapes(config, protocol, observation, tasks, arena_paths, prompt,
                              script_steps) if agent.kind == "model" else [])
    conversation = len(tasks) if config.modes.across_tasks else 1
    if conversation > 1 and shapes:  # one conversation a trial, its tasks in the testbed's order
        shapes = [shapes[t * config.trials] for t in range(len(tasks))] * config.trials
    estimate = estimate_episodes(shapes, prompt, image_tokens=image_tokens,
                                 keep_last_images=config.model_options.keep_last_images,
                                 keep_last_turns=config.model_options.keep_last_turns,
                                 prices=prices, reply_tokens=reply_tokens,
                                 tasks_per_conversation=conversation)
    levels = sorted({task.level for task in tasks})
    replies = (f"at most {protocol.max_scripts} scripts each" if protocol.max_scripts
               is not None else f"at most {protocol.max_replies} replies each")
    plan = [f"model: {agent.label}",
            f"tasks: {len(tasks)} (levels {', '.join(map(str, levels))}) x {config.trials} "
            f"trials = {episodes} episodes, {replies}",
            f"prompt: {prompt.name}; observation: {config.observation}; frames "
            f"{config.resolution} px ({image_tokens} tokens an image assumed)",
            f"mode: {mode_label(config.modes, protocol.max_scripts)}"]
    if config.modes.control == "action":
        plan.append("action control: no more replies than steps before each arena's time limit")
    elif config.modes.observe_every is not None:
        plan.append(f"a script assumed to take {script_steps} steps (the frames sent a turn)")
    if observation.text or observation.arena_map:
        plan.append("text: each task's map or description read at its start in the simulator")
    return plan, estimate


def _episode_shapes(config: RunConfig, protocol: EpisodeProtocol, observation: ObservationMode,
                    tasks: list[Task], arena_paths: dict[str, Path], prompt: Prompt,
                    script_steps: int) -> list[EpisodeShape]:
    """Every planned episode's request shape (trials of a task share theirs)."""
    texts = measure_observation_texts(  # the words do not depend on the frames' size
        lambda: _make_env(dataclasses.replace(config, resolution=TEXT_PROBE_RESOLUTION)),
        protocol, observation,
        {task.task_id: (str(arena_paths[task.task_id]),
                        episode_seed(config.seed, task.task_id, 1)) for task in tasks})
    steps_per_unit = game_clock(config.physics_build).steps_per_unit
    shapes = []
    for task in tasks:
        time_limit = load_config(arena_paths[task.task_id]).arena().time_limit
        shapes += [episode_shape(protocol, config.modes, observation, prompt.messages,
                                 time_limit=time_limit, steps_per_unit=steps_per_unit,
                                 texts=texts[task.task_id],
                                 script_steps=script_steps)] * config.trials
    return shapes


def resume_run(run_dir: str | Path, overrides: ResumeOverrides | None = None, *,
               show_progress: bool = True) -> RunOutcome:
    """Play what is left of a run, with its recorded settings and the overrides given.

    Episodes sealed as infrastructure failures are played again; the rest that are sealed
    are kept. Runs written by earlier versions (whose manifest recorded the command line)
    resume too.

    Raises:
        RunError: not a run directory, a malformed manifest, arena files or a prompt that
            differ from the run's, or another process holds the run.
        RunInterrupted: Ctrl-C.

    """
    run_dir = Path(run_dir)
    manifest = _read_manifest(run_dir)
    config = (overrides or ResumeOverrides()).apply(_config_of(manifest, run_dir))
    config, tasks, arena_paths, agent, prompt = _resolve(config)
    _check_arenas_unchanged(run_dir, manifest, arena_paths)
    _check_prompt_unchanged(run_dir, manifest, prompt)
    plan = _plan(config, tasks, arena_paths, agent, prompt)
    with _locked(RunStore(run_dir, config.frames)) as store, _storage_errors(run_dir):
        try:
            store.check_episode_folders()
        except SchemaError as error:
            raise RunError(str(error)) from None
        store.remove_stale_temporaries()
        for note in store.set_aside_unreadable_results():
            print(f"warning: {note}", file=sys.stderr)
        return RunOutcome(run_dir, _run_suite(plan, store, show_progress))


def run_config_of(run_dir: str | Path) -> RunConfig:
    """The config a run was started with (what ``resume_run`` continues).

    Raises:
        RunError: not a run directory, or a manifest that does not hold a config.

    """
    return _config_of(_read_manifest(Path(run_dir)), Path(run_dir))


def _read_manifest(run_dir: Path) -> RunManifest:
    try:
        return read_manifest(run_dir)
    except (FileNotFoundError, SchemaError) as error:
        if run_dir.is_dir() and not _holds_a_run(run_dir) and (run_dir / LOCK).exists():
            raise RunError(f"{run_dir} holds only the .lock of a start interrupted before its "
                           "manifest was written: no episode was played; start the run again "
                           "with the same command") from error
        raise RunError(str(error)) from error


def _config_of(manifest: RunManifest, run_dir: Path) -> RunConfig:
    try:
        return settings_of(manifest).config
    except SchemaError as error:
        raise RunError(f"{run_dir / 'manifest.json'}: {error}") from error


def _check_run_location(out: Path, run_id: str | None) -> None:
    """Refuse a run id that is not one folder name, and an ``out`` no run can be written in.

    Checked before anything else, so that nothing is written (not even ``out`` itself) for a
    run that could not be stored: ``--run-id ../x`` would land outside ``out``, and an ``out``
    below a file or in a read-only folder would fail only after the checks had run.
    """
    if run_id is not None and (run_id in ("", ".", "..") or "/" in run_id or "\\" in run_id
                               or "\0" in run_id):
        raise RunError(f"run id {run_id!r} must be a single folder name (no '/', not '..')")
    if run_id is not None and any(unicodedata.category(char)[0] == "C" for char in run_id):
        raise RunError(f"run id {run_id!r} holds a control character (a newline, an escape "
                       "sequence...): the folder's name would be printed to the terminal")
    existing = out
    while not existing.exists():
        if existing.is_symlink() or existing.parent == existing:
            break
        existing = existing.parent
    if existing.exists() and not existing.is_dir():
        raise RunError(f"cannot write runs in {out}: {existing} is a file, not a folder")
    if existing.exists() and not os.access(existing, os.W_OK | os.X_OK):
        raise RunError(f"cannot write runs in {out}: {existing} is not writable")


def _resolve(config: RunConfig, *, check_key: bool = True
             ) -> tuple[RunConfig, list[Task], dict[str, Path], AgentSpec, Prompt]:
    """The config with its presets applied, the tasks, their arena files, agent and prompt.

    Every arena file is loaded: a misread arena or a missing API key stops the run here,
    before it starts (the key only with ``check_key``: a dry run calls no model).

    Raises:
        ConfigError: a requirement of the agent or the prompt not met (the field named).
        RunError: anything else that stops the run.

    """
    config, tasks, arena_paths, prompt = _resolve_tasks_and_prompt(config)
    try:
        agent = resolve_agent(config.model, check_key=check_key, **_agent_options(config))
    except (LLMError, ValueError, LookupError) as error:
        raise RunError(_message(error)) from error
    return config, tasks, arena_paths, agent, prompt


def _resolve_tasks_and_prompt(config: RunConfig
                              ) -> tuple[RunConfig, list[Task], dict[str, Path], Prompt]:
    """The config with its presets applied, the tasks, their arena files and the prompt.

    Every arena file is loaded.

    Raises:
        ConfigError: a requirement of the agent or the prompt not met (the field named).
        RunError: anything else that stops the run.

    """
    config = apply_presets(config)
    tasks, arena_paths, chosen = resolve_tasks(config)
    _note_variant_builds(config, chosen)
    return config, tasks, arena_paths, _load_prompt(config)


def resolve_tasks(config: RunConfig) -> tuple[list[Task], dict[str, Path], list[Variant]]:
    """The tasks ``config`` names, their arena files, and the variants chosen.

    With ``variants`` the tasks are its kept variants of the named ones; without, no variants
    are chosen. Every arena file is loaded, so a bad one stops the caller before anything is
    played: the runner's and the human study's one check.

    Raises:
        RunError: an unknown task or level, a missing or malformed arena, a bad variants folder.

    """
    chosen: list[Variant] = []
    try:
        if config.variants is not None:
            tasks, arena_paths, chosen = variant_tasks(config.variants, config.level,
                                                       config.tasks)
        else:
            tasks = select_tasks(config.level, config.tasks, full=config.full_testbed)
            arena_paths = {t.task_id: resolve_arena_path(t.task_id, config.arenas_dir)
                           for t in tasks}
        for path in arena_paths.values():
            load_config(path)
    except (ArenaError, ValueError, FileNotFoundError, LookupError,
            VariantIndexError) as error:
        raise RunError(_message(error)) from error
    return tasks, arena_paths, chosen


def _note_variant_builds(config: RunConfig, chosen: list[Variant]) -> None:
    """Say which variants were validated in another build than the one the run plays.

    Nothing checked that those are solvable in this run's build. With ``variants make``'s
    default order they are mostly variants of build-dependent tasks (validated in 2019, the
    only build whose oracle solves their parents): fair to compare with their parents, whom
    the run plays in the same build, but worth knowing when reading the pass rates.
    """
    build = config.physics_build if config.backend == "embedded" else PHYSICS_BUILDS[0]
    other = [v for v in chosen if v.physics_build != build]
    if other:
        one = len(other) == 1
        print(f"note: {len(other)} variant{'' if one else 's'} (of "
              f"{', '.join(sorted({v.parent for v in other}))}) {'was' if one else 'were'} "
              f"validated in the {'/'.join(sorted({v.physics_build for v in other}))} build, "
              f"not the {build} build this run plays: nothing checked that "
              f"{'it is' if one else 'they are'} solvable in this build (docs/testbed-audit.md "
              "lists the tasks solvable in one build only)", file=sys.stderr)


def _plan(config: RunConfig, tasks: list[Task], arena_paths: dict[str, Path],
          agent: AgentSpec, prompt: Prompt) -> _Plan:
    """Check the replay source and the backend, and resolve the run."""
    replay_seed = None
    replay_from = agent.options.get("replay_from")  # given to an agent that replays it
    if replay_from is not None and not Path(replay_from).exists():
        raise RunError(f"--replay-from {replay_from}: no such episode directory or "
                       "scripts file")
    if replay_from is not None:
        replay_seed = _check_replay_task(Path(replay_from), [t.task_id for t in tasks])
    _check_backend(config)
    try:
        SUITES[config.executor].check(config)
    except (RayUnavailable, ValueError) as error:
        raise RunError(str(error)) from error
    config = SUITES[config.executor].settle(config, agent.kind)  # recorded in the manifest
    prices = _prices(config, agent)
    task_ids = tuple(task.task_id for task in tasks)
    run = ResolvedRun(
        config=config, tasks=task_ids, replay_seed=replay_seed,
        price_per_mtok=(prices.input_per_mtok, prices.output_per_mtok) if prices else None,
        cost_known=prices is not None or agent.kind != "model",
        variants=({v.variant_id: v.parent
                   for v in variant_tasks(config.variants, config.level, config.tasks)[2]}
                  if config.variants is not None else {}),
        conversations=({name: tuple(order) for name, order in conversation_orders(
            list(task_ids), config.trials, config.modes.order, config.seed).items()}
            if config.modes.across_tasks else None),
    )
    return _Plan(run, tasks, agent, prompt, arena_paths, _observation(config), prices)


def _observation(config: RunConfig) -> ObservationMode:
    """What each message shows: the config's observation, and the map its prompt declares."""
    return ObservationMode(config.observation, config.perspective,
                           arena_map=prompt_spec(config.prompt).arena_map)


def _check_observation(config: RunConfig) -> None:
    """Text observations and the arena's map need a backend that can describe the world."""
    try:
        check_observation(config.observation, config.perspective, config.backend,
                          arena_map=prompt_spec(config.prompt).arena_map)
    except ValueError as error:
        raise RunError(str(error)) from error


def _prices(config: RunConfig, agent: AgentSpec) -> Prices | None:
    """The model's prices: the user's, else litellm's; an unknown price is said out loud.

    Without a price a run's cost cannot be counted, so a budget could never stop it: that is
    refused, and otherwise the user is warned once that costs will show as unknown.

    Raises:
        RunError: a budget for a model without a price.

    """
    if agent.kind != "model":
        return None
    given = config.model_options.price_per_mtok
    if given is not None:
        return Prices(*given)
    model = agent.describe()["litellm_model"]
    prices = litellm_prices(model)
    if prices is None and config.budget_usd is not None:
        raise RunError(f"litellm has no price for {model}, so --budget-usd could not be kept; "
                       "give its prices with --price-per-mtok INPUT,OUTPUT (dollars per "
                       "million tokens)")
    if prices is None:
        print(f"warning: litellm has no price for {model}: its cost shows as unknown; give "
              "--price-per-mtok INPUT,OUTPUT to count it", file=sys.stderr)
    elif prices.input_per_mtok == prices.output_per_mtok == 0:  # litellm's Ollama entries
        print(f"warning: litellm prices {model} at $0 (a model on your own hardware): its "
              "cost shows as $0.00, not what the hardware costs; give --price-per-mtok "
              "INPUT,OUTPUT to count it", file=sys.stderr)
    return prices


@contextmanager
def _storage_errors(run_dir: Path) -> Iterator[None]:
    """Turn a file the run cannot write (a full disk, a read-only folder) into a RunError.

    The message names the file and the way to go on. Every write of a sealed episode is
    atomic, so what was sealed before stays whole; the episodes in flight are played again
    on resume.
    """
    try:
        yield
    except OSError as error:
        where = f"{error.filename}: " if error.filename else ""
        raise RunError(
            f"cannot write the run: {where}{error.strerror or error}; finished episodes are "
            f"kept in {run_dir}; once there is room (or the folder is writable) continue "
            f"with --resume {run_dir}") from error


@contextmanager
def _locked(store: RunStore) -> Iterator[RunStore]:
    """Hold the run's lock while writing it; another holder is a ``RunError``."""
    try:
        lock = store.lock()
        lock.acquire()
    except Timeout as error:  # an OSError too: first
        raise RunError(f"another process is running {store.root} (it holds {error.lock_file}); "
                       "wait for it to finish, or stop it first") from error
    except OSError as error:  # a read-only run folder, a .lock that is a folder...
        where = f"{error.filename}: " if error.filename else ""
        raise RunError(f"cannot lock the run {store.root}: {where}"
                       f"{error.strerror or error}") from error
    try:
        yield store
    finally:
        lock.release()


def _run_suite(plan: _Plan, store: RunStore, show_progress: bool) -> list[EpisodeResult]:
    """Play the pending episodes and tell the user why the run stopped early, if it did."""
    run_dir = store.root
    options = plan.config.model_options
    if plan.config.cache_dir and plan.agent.kind == "model" and options.temperature != 0:
        print(f"warning: --cache answers only requests at temperature 0; at temperature "
              f"{options.temperature:g} every request goes to the model", file=sys.stderr)
    suite = SUITES[plan.config.executor](
        plan.run, store, tasks=plan.tasks, observation=plan.observation,
        make_env=functools.partial(_make_env, plan.config),
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
    bar = tqdm(total=len(pending), unit="episode", desc="episodes", disable=not show_progress,
               dynamic_ncols=True)
    suite.on_result = lambda result, progress: _update_bar(bar, progress,
                                                           plan.run.cost_known, suite.cache)
    try:
        results = suite.run()
    except LLMRequestError as error:  # every later call would be refused the same way
        raise RunError(
            f"the model refused a request, so the run stopped: {error}\n"
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
            _record_cache_use(store, suite.cache)
        _record_lost_input(store, suite.lost_input.record())
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


def _agent_options(config: RunConfig) -> dict[str, Any]:
    """Every option a run can give an agent; ``resolve_agent`` keeps the ones it takes."""
    options = config.model_options
    return {
        "api_base": options.api_base, "temperature": options.temperature,
        "max_tokens": options.max_tokens, "timeout_s": options.timeout_s,
        "max_retries": options.max_retries,
        "max_concurrent": options.provider_concurrency or config.concurrency,
        "requests_per_minute": options.provider_rpm,
        "keep_last_images": options.keep_last_images, "prompt_caching": options.prompt_caching,
        "keep_last_turns": options.keep_last_turns, "extra_params": options.extra_params,
        "fold_system_prompt": options.fold_system_prompt or None,
        "replay_from": config.replay_from, "price_per_mtok": options.price_per_mtok,
        "budget": config.oracle_budget,
        # the built-in agents that write replies themselves write them for the control;
        # left out for the paper's, so its manifests stay as they were
        "control": None if config.modes.control == "script" else config.modes.control,
    }


def _check_replay_task(source: Path, selected: list[str]) -> int | None:
    """A logged episode's scripts mean something only in the world they were played in.

    A sealed episode names its task and its seed: the task must be the one selected, and the
    seed is returned for every replayed episode to use (random placements and colours
    depend on it). A scripts file or an unfinished episode names neither, and is replayed
    wherever, and with whatever seed, the run gives it.
    """
    if not (source / RESULT).is_file():
        return None
    logged = read_result(source)
    recorded = logged.task_id
    if set(selected) != {recorded}:
        shown = ", ".join(selected[:4]) + (f" and {len(selected) - 4} more" if len(selected) > 4
                                           else "")
        raise RunError(f"--replay-from {source} was played on task {recorded}, but this run "
                       f"selects {shown}; add --tasks {recorded}")
    return logged.seed


def _make_env(config: RunConfig) -> AnimalAIEnv:
    kwargs = ({"file_name": config.unity_build}
              if config.backend == "unity" and config.unity_build is not None else None)
    if config.backend == "embedded":
        kwargs = {"physics_build": config.physics_build}
    return AnimalAIEnv(resolution=config.resolution, backend=config.backend,
                       arenas_dir=config.arenas_dir, backend_kwargs=kwargs)


def _check_backend(config: RunConfig) -> None:
    """Build one environment, and launch its player once, before the run directory exists.

    A missing Unity package or build, a file that cannot run, a player that crashes or a busy
    port is then a one-line error that leaves nothing behind.
    """
    try:
        env = _make_env(config)
        try:
            check = getattr(env.backend, "check", None)
            if check is not None:
                check()
        finally:
            env.close()
    except UnityUnavailable as error:
        raise RunError(str(error)) from error


def _load_prompt(config: RunConfig) -> Prompt:
    """The prompt as the run plays it.

    The observation is checked first: the worked example is shown in its words.
    """
    _check_observation(config)
    try:
        return load_prompt_for_mode(config.prompt, config.modes, config.example,
                                    ObservationMode(config.observation, config.perspective))
    except (KeyError, ValueError, ExampleError, FileNotFoundError) as error:
        raise RunError(_message(error)) from error


def _message(error: Exception) -> str:
    """The error's text for the user; ``str()`` of a KeyError would wrap it in quotes."""
    if isinstance(error, KeyError) and error.args:
        return str(error.args[0])
    return str(error)


def _check_arenas_unchanged(run_dir: Path, manifest: RunManifest,
                            arena_paths: dict[str, Path]) -> None:
    """Refuse to resume on arena files that differ from the ones the run started with."""
    changed = [f"{task_id} ({path})" for task_id, path in arena_paths.items()
               if (recorded := manifest.arena_sha256(task_id)) is not None
               and file_sha256(path) != recorded]
    if changed:
        raise RunError(f"arena files differ from those {run_dir} started with (checksums in its "
                       f"manifest.json): {', '.join(changed)}; resume with the original "
                       "--arenas-dir, or start a new run")


def _check_prompt_unchanged(run_dir: Path, manifest: RunManifest, prompt: Prompt) -> None:
    """Refuse to resume with a prompt, turn messages or worked example the run did not use.

    The prompt files live in the package, so a ``git pull`` or an edit between two
    invocations would otherwise change what the model is told halfway through a run.
    """
    recorded = manifest.prompt
    current = prompt.manifest()

    def example_hash(record: dict[str, Any]) -> str | None:
        return (record.get("example") or {}).get("sha256")

    hashes = {"the system prompt": (recorded.get("sha256"), current["sha256"])}
    if "turn_messages_sha256" in recorded:  # runs from before it was recorded lack it
        hashes["the turn messages"] = (recorded["turn_messages_sha256"],
                                       current["turn_messages_sha256"])
    hashes["the worked example"] = (example_hash(recorded), example_hash(current))
    changed = [what for what, (then, now) in hashes.items() if then != now]
    if changed:
        raise RunError(f"{' and '.join(changed)} of prompt {current['name']!r} differ from what "
                       f"{run_dir} started with (hashes in its manifest.json); resume with the "
                       "llm-aai version that started it, or start a new run")


def _unused_run_dir(out: Path, run_id: str) -> Path:
    """``out/run_id``, or ``out/run_id-2``, ``-3``... when a run started in the same second."""
    candidate, n = out / run_id, 1
    while candidate.exists() and (not candidate.is_dir() or _holds_a_run(candidate)):
        n += 1
        candidate = out / f"{run_id}-{n}"
    return candidate


def _manifest(run_id: str, plan: _Plan) -> RunManifest:
    """Everything needed to know later exactly what ran, and to resume it (never a secret)."""
    run = plan.run
    return RunManifest(
        run_id=run_id,
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        run=run.to_record(),
        agent=_with_served_models(plan.agent.describe(), plan.agent.options.get("api_base")),
        prompt=plan.prompt.manifest(),
        seeds={"run": run.config.seed, "episodes": {
            episode_id(task_id, trial): run.seed_of(task_id, trial)
            for task_id in run.tasks for trial in range(1, run.config.trials + 1)}},
        arenas={task_id: file_sha256(path) for task_id, path in plan.arena_paths.items()},
        versions=_versions(),
        git=_git_revision(),
        host={"python": platform.python_version(), "platform": platform.platform(),
              "mujoco_gl": os.environ.get("MUJOCO_GL")},
        schema_version=SCHEMA_VERSION,
    )


def _with_served_models(agent: dict[str, Any], api_base: str | None) -> dict[str, Any]:
    """The agent's description and, for a self-hosted server, the models it lists.

    The alias the run calls names no weights (None: the server lists none).
    """
    if not api_base:
        return agent
    listed = served_models(api_base)
    return {**agent, "served_models": list(listed) if listed is not None else None}


def _versions() -> dict[str, str | None]:
    versions = {}
    for package in ("llm-aai", "mujoco", "gymnasium", "litellm", "numpy"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return versions


def _git_revision() -> dict[str, Any] | None:
    """The source revision when running from a checkout (None from an installed wheel)."""
    source = Path(__file__).resolve().parents[2]
    try:
        revision = subprocess.run(["git", "-C", str(source), "rev-parse", "HEAD"],
                                  capture_output=True, text=True, timeout=10, check=True)
        status = subprocess.run(["git", "-C", str(source), "status", "--porcelain"],
                                capture_output=True, text=True, timeout=10, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return {"revision": revision.stdout.strip(), "dirty": bool(status.stdout.strip())}


def _record_cache_use(store: RunStore, cache: ResponseCache) -> None:
    """Add this invocation's cache hits and misses to the manifest's ``cache`` record.

    The record sums every invocation of the run, so a resumed run's manifest tells what the
    whole run took from the cache.
    """
    manifest = store.read_manifest()
    store.write_manifest(dataclasses.replace(manifest, cache={
        "directory": str(cache.directory),
        "hits": manifest.cache_hits + cache.hits,
        "misses": manifest.cache_misses + cache.misses}))


def _record_lost_input(store: RunStore, lost: dict[str, Any] | None) -> None:
    """Add this invocation's turns that lost input to the manifest's ``warnings``.

    Summed over the run's invocations, the first note kept, so the analysis and the viewer
    can say that the run measured a model that did not see all of its input.
    """
    if lost is None:
        return
    manifest = store.read_manifest()
    warnings = dict(manifest.warnings or {})
    earlier = warnings.get("lost_input") or {"turns": 0, "first": lost["first"]}
    warnings["lost_input"] = {"turns": earlier["turns"] + lost["turns"],
                              "first": earlier["first"]}
    store.write_manifest(dataclasses.replace(manifest, warnings=warnings))


def _update_bar(bar, progress: Progress, cost_known: bool = True,
                cache: ResponseCache | None = None) -> None:
    rate = progress.passed / progress.done if progress.done else 0.0
    cost = f"${progress.cost_usd:.2f}" if cost_known else "$? (no price)"
    cached = f" cache {cache.hits} hit/{cache.misses} miss" if cache is not None else ""
    bar.set_postfix_str(  # before update(), which draws it: the shown rate is never a step late
        f"pass {rate:.0%} infra {progress.infra_failures} "
        f"tok {progress.tokens:,} {cost}{cached}", refresh=False)
    bar.update(1)
