"""The dry run (``--dry-run``): a run's plan and what it will ask of its model, nothing written.

``estimate`` works the requests out from the protocol; this module gives it what the run would
play: the config resolved as a run resolves it, each task's time limit, and the map and words
of a text observation read in the simulator.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from llm_aai.agents import AgentSpec
from llm_aai.arena import Task, load_config
from llm_aai.llm.aliases import check_credentials, resolve_model
from llm_aai.llm.errors import MissingAPIKey
from llm_aai.perception.observer import ObservationMode
from llm_aai.prompts import Prompt
from llm_aai.protocol import EpisodeProtocol
from llm_aai.protocol.modes import mode_label
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
from llm_aai.runner.plan import observation_of, resolve_config
from llm_aai.runner.prices import run_prices
from llm_aai.runner.run_env import make_env
from llm_aai.runner.suite import episode_seed
from llm_aai.settings import RunConfig
from llm_aai.sim.builds import game_clock

TEXT_PROBE_RESOLUTION = 64
"""Frame size of the env a dry run reads maps and descriptions in: the text is the same at
any size (the eye's rays are their own), and small frames draw fastest."""


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
    config, tasks, arena_paths, agent, prompt = resolve_config(config, check_key=False)
    prices = run_prices(config, agent)
    episodes = len(tasks) * config.trials
    image_tokens = image_tokens_for(agent.describe().get("provider") or "", config.resolution,
                                    own_server=config.model_options.api_base is not None)
    protocol = config.protocol
    observation = observation_of(config)
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
    if agent.kind != "model":  # a built-in agent: nothing is asked of a model, nothing paid
        estimate = dataclasses.replace(estimate, usd=0.0, calls_model=False)
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
    missing = _missing_key(config, agent)
    if missing is not None:
        plan.append(missing)
    return plan, estimate


def _missing_key(config: RunConfig, agent: AgentSpec) -> str | None:
    """The line saying the model's key is not set (names the variables, never a value).

    The dry run plans without a key (an estimate comes before buying one), but the run it
    plans would stop at once: said here so that the plan is not mistaken for a go-ahead.
    """
    if agent.kind != "model":
        return None
    try:
        check_credentials(resolve_model(config.model), config.model_options.api_base)
    except MissingAPIKey as missing:
        return (f"API key: not set ({' or '.join(missing.env_vars)} is empty), so the run "
                "would stop before its first episode: set it, or give --api-base for a local "
                "OpenAI-compatible server")
    return None


def _episode_shapes(config: RunConfig, protocol: EpisodeProtocol, observation: ObservationMode,
                    tasks: list[Task], arena_paths: dict[str, Path], prompt: Prompt,
                    script_steps: int) -> list[EpisodeShape]:
    """Every planned episode's request shape (trials of a task share theirs)."""
    texts = measure_observation_texts(  # the words do not depend on the frames' size
        lambda: make_env(dataclasses.replace(config, resolution=TEXT_PROBE_RESOLUTION)),
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
