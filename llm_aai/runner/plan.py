"""A run's config checked and resolved into the plan its suite and its manifest are made from.

``start_run``, ``open_run``, ``resume_run`` and the dry run resolve a config the same way
here: presets applied, the tasks and every arena file loaded, the agent and the prompt built,
the executor checked. ``resolve_tasks`` is also the human study's one check of its tasks.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llm_aai.agents import AgentSpec, resolve_agent
from llm_aai.arena import ArenaError, Task, load_config, resolve_arena_path, select_tasks
from llm_aai.execution import RayUnavailable
from llm_aai.llm.errors import LLMError
from llm_aai.llm.pricing import Prices
from llm_aai.perception.observer import ObservationMode
from llm_aai.prompts import Prompt, prompt_spec
from llm_aai.prompts.examples import ExampleError
from llm_aai.prompts.modes import load_prompt_for_mode
from llm_aai.runner.checks import check_backend, check_observation_backend, check_replay_task
from llm_aai.runner.conversation import conversation_orders
from llm_aai.runner.errors import RunError
from llm_aai.runner.executors import SUITES
from llm_aai.runner.presets import apply_presets
from llm_aai.runner.prices import run_prices
from llm_aai.settings import ResolvedRun, RunConfig
from llm_aai.sim.simulator import PHYSICS_BUILDS
from llm_aai.variants.index import Variant, VariantIndexError, variant_tasks


@dataclass(frozen=True)
class Plan:
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


def resolve_config(config: RunConfig, *, check_key: bool = True
                   ) -> tuple[RunConfig, list[Task], dict[str, Path], AgentSpec, Prompt]:
    """The config with its presets applied, the tasks, their arena files, agent and prompt.

    Every arena file is loaded: a misread arena or a missing API key stops the run here,
    before it starts (the key only with ``check_key``: a dry run calls no model).

    Raises:
        ConfigError: a requirement of the agent or the prompt not met (the field named).
        RunError: anything else that stops the run.

    """
    config, tasks, arena_paths, prompt = resolve_tasks_and_prompt(config)
    try:
        agent = resolve_agent(config.model, check_key=check_key, **_agent_options(config))
    except (LLMError, ValueError, LookupError) as error:
        raise RunError(_message(error)) from error
    return config, tasks, arena_paths, agent, prompt


def resolve_tasks_and_prompt(config: RunConfig
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


def make_plan(config: RunConfig, tasks: list[Task], arena_paths: dict[str, Path],
              agent: AgentSpec, prompt: Prompt) -> Plan:
    """Check the replay source and the backend, and resolve the run."""
    replay_seed = None
    replay_from = agent.options.get("replay_from")  # given to an agent that replays it
    if replay_from is not None and not Path(replay_from).exists():
        raise RunError(f"--replay-from {replay_from}: no such episode directory or "
                       "scripts file")
    if replay_from is not None:
        replay_seed = check_replay_task(Path(replay_from), [t.task_id for t in tasks])
    check_backend(config)
    try:
        SUITES[config.executor].check(config)
    except (RayUnavailable, ValueError) as error:
        raise RunError(str(error)) from error
    config = SUITES[config.executor].settle(config, agent.kind)  # recorded in the manifest
    prices = run_prices(config, agent)
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
    return Plan(run, tasks, agent, prompt, arena_paths, observation_of(config), prices)


def observation_of(config: RunConfig) -> ObservationMode:
    """What each message shows: the config's observation, and the map its prompt declares."""
    return ObservationMode(config.observation, config.perspective,
                           arena_map=prompt_spec(config.prompt).arena_map)


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


def _load_prompt(config: RunConfig) -> Prompt:
    """The prompt as the run plays it.

    The observation is checked first: the worked example is shown in its words.
    """
    check_observation_backend(config)
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
