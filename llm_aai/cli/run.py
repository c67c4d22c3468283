"""``python -m llm_aai.run``: evaluate an agent on testbed tasks under the paper's protocol.

The flags are a ``RunConfig`` (``llm_aai.settings``) spelled for the command line: each
setting's flag has the config field's dotted path as its ``dest`` (``--timeout`` sets
``model_options.timeout_s``) and takes its default from the config, so a new setting is one
config field and one ``add_argument`` line. The config's rules, and the presets and
requirements of the chosen agent, control and prompt (``llm_aai.runner.presets``), raise a
``ConfigError`` naming the field, which is said here with its flag. The run itself is
``llm_aai.runner``'s ``start_run`` / ``resume_run``.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import math
import os
import sys
from pathlib import Path
from typing import Any, NoReturn

from llm_aai.agents.registry import AGENTS, MODEL_OPTIONS
from llm_aai.arena import ArenaError
from llm_aai.arena.catalog import ArenaNotFoundError, TaskSelectionError, select_tasks
from llm_aai.cli import analyze
from llm_aai.cli.hints import module_command
from llm_aai.cli.renamed import OldFlagNoted, old_choices_noted
from llm_aai.cli.signals import STOP_SIGNALS, stop_on_signals
from llm_aai.execution.registry import CHOICES as EXECUTOR_CHOICES
from llm_aai.frames import FRAME_KINDS
from llm_aai.llm.aliases import MODEL_ALIASES
from llm_aai.llm.cache import default_cache_dir
from llm_aai.logs import RunStore
from llm_aai.logs.store import RERUN_END_REASONS
from llm_aai.perception import PERSPECTIVES
from llm_aai.perception.observer import OBSERVATIONS
from llm_aai.protocol.across_tasks import CONTEXTS, ORDERS
from llm_aai.protocol.modes import CONTROLS, RENAMED_CONTROLS
from llm_aai.runner import (
    RESULTS_DIR,
    ResumeOverrides,
    RunConfig,
    RunError,
    RunInterrupted,
    RunOutcome,
    default_run_id,
    estimate_run,
    resume_run,
    run_config_of,
    start_run,
)
from llm_aai.runner.app import check_resumable
from llm_aai.runner.presets import fill_presets
from llm_aai.script import MODES as SCRIPT_MODES
from llm_aai.settings import MAX_RESOLUTION, MIN_RESOLUTION, ConfigError
from llm_aai.sim.simulator import PHYSICS_BUILDS
from llm_aai.variants import VariantIndexError, VariantRequestError
from llm_aai.variants.cache import cached_variants

__all__ = ["build_parser", "config_from_args", "default_run_id", "main"]

SETTINGS = frozenset(RunConfig.field_paths())
"""The config's fields by dotted path: the ``dest`` of each setting's flag."""
RESUME_FLAGS = {"cache_dir": "cache_dir", "concurrency": "concurrency",
                "arenas_dir": "arenas_dir", "model_options.api_base": "api_base",
                "budget_usd": "budget_usd",
                "stop_after_failed_episodes": "stop_after_failed_episodes",
                "unity_build": "unity_build", "model_options.price_per_mtok": "price_per_mtok",
                "executor": "executor", "ray_address": "ray_address",
                "ray_episode_cpus": "ray_episode_cpus"}
"""Settings a resumed run may change -> their ``ResumeOverrides`` field. Giving any other
setting's flag with a value unlike the run's is refused rather than silently ignored."""

_DEFAULTS = RunConfig(model="")  # read for its defaults only

AGENT_FLAGS = {"replay_from": ("replay_from", "the scripts it re-issues"),
               "oracle_budget": ("budget", "its search budget")}
"""Settings only some built-in agents take -> the agent option each becomes, and what it is.
Given to an agent that does not take it, the flag is a usage error naming both flags: the
run would otherwise ignore it in silence (``resolve_agent`` drops another agent's option)."""


def build_parser() -> argparse.ArgumentParser:
    """The command line; each setting's default is the run config's (``RunConfig``)."""
    parser = _OneLineErrors(
        prog="python -m llm_aai.run",
        description="Evaluate an LLM (or a built-in agent) on Animal-AI testbed tasks.",
    )
    parser.add_argument("--model", dest="model", help=_model_help())
    parser.add_argument("--level", dest="level",
                        help="levels, e.g. 1-10 or 1,3,5 (default: all 10)")
    parser.add_argument("--tasks", dest="tasks",
                        help="comma-separated task ids, e.g. 01-04-03,02-10-01")
    parser.add_argument("--full-testbed", dest="full_testbed", action="store_true",
                        help="select from all 900 testbed tasks instead of the 40-task subset")
    parser.add_argument("--trials", dest="trials", type=_at_least(1),
                        help="episodes per task, each with its own seed (default: %(default)s)")
    parser.add_argument("--seed", dest="seed", type=int,
                        help="run seed; each episode's seed derives from it, the task and the "
                             "trial, and is recorded in the manifest (default: %(default)s)")
    parser.add_argument("--backend", dest="backend", choices=("embedded", "unity"),
                        help="embedded: our MuJoCo simulator (default); unity: the Animal-AI "
                             "build through the animalai package")
    parser.add_argument("--physics-build", dest="physics_build",
                        choices=PHYSICS_BUILDS,
                        help="with the embedded backend, the Animal-AI build whose physics to "
                             "follow: 3.x (the paper's, 3.1.3; default) or 2019 (the Olympics "
                             "build: bounce balls bounce); recorded in the manifest")
    parser.add_argument("--unity-build", dest="unity_build", type=Path, metavar="PATH",
                        help="with --backend unity: the player executable (default: "
                             "$LLM_AAI_UNITY_BUILD, else animalai's own search)")
    parser.add_argument("--resolution", dest="resolution", type=int,
                        help=f"square frame size in pixels, {MIN_RESOLUTION} to {MAX_RESOLUTION} "
                             "(default: %(default)s)")
    parser.add_argument("--frames", dest="frames.kind", choices=FRAME_KINDS,
                        help="how frames are sent and logged: jpeg (as in the paper's "
                             "recording, default) or png (lossless)")
    parser.add_argument("--jpeg-quality", dest="frames.quality", type=_at_least(1, at_most=95),
                        help="1-95 (default: %(default)s)")
    parser.add_argument("--prompt", dest="prompt",
                        help="react (experiment 1, default), icl (experiment 2: a worked "
                             "example first), plan (plan-then-act: a map of the arena, one "
                             "program executed open-loop), or a prompt file")
    parser.add_argument("--example", dest="example", type=Path,
                        help="with --prompt icl: an example directory to use instead of the "
                             "built-in tutorial (see python -m llm_aai.prompts.examples)")
    parser.add_argument("--observation", dest="observation", choices=OBSERVATIONS,
                        help="what each message shows: image (the paper's, default), text (a "
                             "description of what the eye sees: objects, distances, bearings) "
                             "or both; text needs the embedded backend")
    parser.add_argument("--perspective", "--frame", dest="perspective", choices=PERSPECTIVES,
                        action=OldFlagNoted, old=("--frame",),
                        help="the text's frame of reference: egocentric (distance and bearing, "
                             "default) or allocentric (arena coordinates and your own pose); "
                             "--frame is its old name")
    parser.add_argument("--script-mode", dest="script_mode", choices=SCRIPT_MODES,
                        help="strict: the paper's grammar (default); lenient: also repair code "
                             "fences, prose, lowercase and a missing final ';', logging each")
    parser.add_argument("--max-scripts", dest="protocol.max_scripts", type=_script_cap,
                        help="scripts per episode (the paper: %(default)s); 0: no cap, play "
                             "to the arena's time limit (needs --max-replies)")
    modes = parser.add_argument_group("control and sensing modes (beyond the paper)")
    modes.add_argument("--control", dest="modes.control", choices=CONTROLS,
                       type=old_choices_noted("--control", RENAMED_CONTROLS),
                       help="script: a Think/Go/Turn script per reply (the paper, default); "
                            "action: one of AAI's 9 actions per reply, repeated up to x4, "
                            "then a new observation (needs --max-replies; 'frame' is its old "
                            "name)")
    modes.add_argument("--max-replies", dest="protocol.max_replies", type=_at_least(1), metavar="N",
                       help="cost guard: replies per episode, for --control action and "
                            "--max-scripts 0")
    modes.add_argument("--observe-every", dest="modes.observe_every", type=_at_least(1),
                       metavar="N",
                       help="also show a frame every N steps of a reply, sent in order with "
                            "the next observation")
    modes.add_argument("--filmstrip", dest="modes.filmstrip", action="store_true",
                       help="with --observe-every: join the frames taken during a reply into "
                            "one labelled image (two images per turn)")
    modes.add_argument("--context", dest="modes.context", choices=CONTEXTS,
                       help="per-task: each task its own conversation (the paper, default); "
                            "across-tasks: the tasks of a trial in one conversation, each "
                            "task's outcome told before the next (trials run in parallel, "
                            "a trial's tasks one after another)")
    modes.add_argument("--order", dest="modes.order", choices=ORDERS,
                       help="with --context across-tasks: testbed (the tasks' order, default) "
                            "or shuffled (each trial its own order, drawn from --seed)")
    parser.add_argument("--initial-observations", dest="protocol.initial_observations",
                        type=_at_least(1),
                        help="observations before the first script (the paper: %(default)s); "
                             "the first turn needs at least one image")
    parser.add_argument("--concurrency", dest="concurrency", type=_at_least(1),
                        help="episodes played at once (default: %(default)s); worth raising "
                             "for models, which mostly wait on HTTP")
    parser.add_argument("--executor", dest="executor", choices=EXECUTOR_CHOICES,
                        help="where episodes play: local (this process, default) or ray (Ray "
                             "tasks on a cluster; docs/ray.md)")
    parser.add_argument("--ray-address", dest="ray_address", metavar="ADDRESS",
                        help="with --executor ray: the cluster to join (host:6379, ray://..., "
                             "auto); default: start a Ray on this machine")
    parser.add_argument("--ray-episode-cpus", dest="ray_episode_cpus", type=_positive_float,
                        metavar="CPUS",
                        help="with --executor ray: CPUs each episode's task reserves, e.g. 0.25 "
                             "to play 4 episodes per CPU (default: 1 for a built-in agent, "
                             "0.25 for a model, which mostly waits on its calls; docs/ray.md)")
    parser.add_argument("--max-relaunches", dest="max_relaunches", type=_at_least(0),
                        help="relaunches of a trial whose model calls kept failing "
                             "(default: %(default)s)")
    parser.add_argument("--relaunch-delay", dest="relaunch_delay_s", type=float,
                        help="seconds before the n-th relaunch, times n (default: %(default)g)")
    parser.add_argument("--stop-after-failures", dest="stop_after_failed_episodes",
                        type=_at_least(1), metavar="N",
                        help="stop the run after N episodes in a row lost to infrastructure "
                             "errors (model server down, wrong --api-base); default %(default)s")
    parser.add_argument("--budget-usd", dest="budget_usd", type=_positive_float,
                        help="start no more episodes once the run has cost this much, counting "
                             "every finished attempt and earlier invocations (raise it with "
                             "--resume)")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR,
                        help="folder for run directories (default: %(default)s)")
    parser.add_argument("--run-id", help="name of the run directory (default: timestamp+model)")
    parser.add_argument("--resume", type=Path, metavar="RUN_DIR",
                        help="continue a run: finished episodes are kept, others rerun")
    parser.add_argument("--arenas-dir", dest="arenas_dir", type=Path,
                        help="local folder of testbed YAMLs (else $LLM_AAI_ARENAS or the cache)")
    parser.add_argument("--variants", dest="variants", type=_variants_arg, metavar="DIR|K",
                        help="play the validated variants in DIR (python -m llm_aai.variants "
                             "make) instead of the testbed files; --level/--tasks pick parents. "
                             "A number K instead: make K variants of each task on the fly, "
                             "cached in $XDG_CACHE_HOME/llm-aai/variants (a folder named by a "
                             "number: ./3)")
    parser.add_argument("--variant-seed", dest="variant_seed", type=int, metavar="S",
                        help="with --variants K: the generation seed (default 0)")
    llm = parser.add_argument_group("model options")
    llm.add_argument("--api-base", dest="model_options.api_base",
                     help=("base URL of the provider's API: a local "
                                         "OpenAI-compatible server, a proxy, or "
                                         "llm_aai.llm.fake_server"))
    llm.add_argument("--temperature", dest="model_options.temperature", type=float,
                     help="(default: %(default)g)")
    llm.add_argument("--max-tokens", dest="model_options.max_tokens", type=int,
                     help="reply length limit per call (default: %(default)s)")
    llm.add_argument("--timeout", dest="model_options.timeout_s", type=_positive_float,
                     help="seconds per model call (default: %(default)g)")
    llm.add_argument("--max-retries", dest="model_options.max_retries", type=_at_least(0),
                     help="retries of a call on 429, 5xx and refused connections, with backoff "
                          "and Retry-After; a call that timed out is not retried (the server "
                          "may still be generating it) (default: %(default)s)")
    llm.add_argument("--provider-concurrency", dest="model_options.provider_concurrency",
                     type=_at_least(1),
                     help="simultaneous calls to one provider (default: --concurrency)")
    llm.add_argument("--provider-rpm", dest="model_options.provider_rpm", type=_at_least(1),
                     help="calls to one provider in any minute, across the Ray "
                          "cluster too (default: no limit)")
    llm.add_argument("--keep-last-images", dest="model_options.keep_last_images", type=_at_least(1),
                     help="send only the last K images; older ones become a text placeholder")
    llm.add_argument("--keep-last-turns", dest="model_options.keep_last_turns", type=_at_least(1),
                     help="send only the last N turns after the prompt, to fit a small context")
    llm.add_argument("--prompt-caching", dest="model_options.prompt_caching", action="store_true",
                     help="add Anthropic prompt-caching breakpoints")
    llm.add_argument("--stop", dest="model_options.stop", action=_Repeated, metavar="TEXT",
                     help="a stop sequence sent with every request (repeatable)")
    llm.add_argument("--sampling", dest="model_options.sampling", action=_Repeated,
                     type=_sampling, metavar="KEY=VALUE",
                     help="a further request parameter, e.g. top_p=0.9 or top_k=40 (a number, "
                          "true/false or a \"quoted\" string; repeatable)")
    llm.add_argument("--fold-system-prompt", dest="model_options.fold_system_prompt",
                     action="store_true",
                     help="send the system prompt in the first user message (for a chat "
                          "template without a system role)")
    llm.add_argument("--price-per-mtok", dest="model_options.price_per_mtok", type=_prices,
                     metavar="INPUT,OUTPUT",
                     help="dollars per million input and output tokens, for a model litellm "
                          "has no price for (needed with --budget-usd); recorded in the "
                          "manifest")
    llm.add_argument("--replay-from", dest="replay_from", type=Path,
                     help="with --model replay: the episode directory whose scripts to re-issue")
    parser.add_argument("--oracle-budget", dest="oracle_budget", type=_at_least(0),
                        help="with --model oracle or oracle-frames (the oracle per step, no "
                             "script cap: --control action --max-scripts 0 --max-replies 2000 "
                             "unless given): search budget per episode in simulated "
                             "steps (default 20000)")
    parser.add_argument("--no-progress", action="store_true", help="no live progress bar")
    parser.add_argument("--cache", dest="cache_dir", nargs="?", type=Path,
                        const=default_cache_dir(),
                        metavar="DIR",
                        help="answer identical requests at temperature 0 from a response cache "
                             f"(default folder: {default_cache_dir()}); a re-run costs nothing")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the plan and an estimate of requests, tokens and dollars; "
                             "call nothing, write nothing")
    parser.set_defaults(**{path: _DEFAULTS.value_of(path) for path in SETTINGS - {"model"}})
    for action in parser._actions:  # named by the flag, as argparse would without the dest
        if (action.dest in SETTINGS and action.metavar is None and action.nargs != 0
                and action.choices is None):
            action.metavar = action.option_strings[0].lstrip("-").replace("-", "_").upper()
    return parser


class _OneLineErrors(argparse.ArgumentParser):
    """A parser whose errors are one line (argparse's usage of every flag fills a screen)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (--help lists the flags)\n")


def _model_help() -> str:
    """``--model``'s help, from the tables themselves: every alias's model, every built-in."""
    aliases = ", ".join(f"{alias} = {model}" for alias, model in MODEL_ALIASES.items())
    return (f"a model alias ({aliases}), any litellm model string (provider/model), or a "
            f"built-in agent ({', '.join(AGENTS)})")


def _at_least(low: int, *, at_most: int | None = None):
    """An argparse type: an integer in [low, at_most], refused with the range otherwise."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < low or (at_most is not None and value > at_most):
            bounds = f"from {low} to {at_most}" if at_most is not None else f"at least {low}"
            raise argparse.ArgumentTypeError(f"{value} is out of range: must be {bounds}")
        return value
    return parse


def _script_cap(text: str) -> int | None:
    """``--max-scripts``: a cap of at least 1, or 0 for none (None)."""
    return _at_least(0)(text) or None


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{value:g} must be greater than 0")
    return value


def _prices(text: str) -> tuple[float, float]:
    """``INPUT,OUTPUT`` dollars per million tokens (the config checks their range)."""
    parts = text.split(",")
    try:
        if len(parts) != 2:
            raise ValueError
        return float(parts[0]), float(parts[1])
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not INPUT,OUTPUT (two numbers: dollars per million tokens)") from None


class _Repeated(argparse.Action):
    """A repeatable flag whose values make a tuple, the config's type (``append``'s is a list)."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        setattr(namespace, self.dest, (*(getattr(namespace, self.dest, None) or ()), values))


def _sampling(text: str) -> tuple[str, bool | int | float | str]:
    """``KEY=VALUE``, the value typed: a number, true/false or a JSON-quoted string.

    Unquoted words are refused rather than sent as text: ``top_p=O.9`` is a typo the server
    would otherwise reject, or take as something else, mid-run.
    """
    name, equals, raw = text.partition("=")
    name, raw = name.strip(), raw.strip()
    if not equals or not name:
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE (e.g. top_p=0.9)")
    if raw in ("true", "false"):
        return name, raw == "true"
    try:
        return name, int(raw)
    except ValueError:
        pass
    try:
        number = float(raw)
        if math.isfinite(number):
            return name, number
    except ValueError:
        pass
    try:
        value = json.loads(raw) if raw.startswith('"') else None
    except ValueError:
        value = None
    if not isinstance(value, str):
        raise argparse.ArgumentTypeError(
            f"{text!r}: the value must be a finite number, true or false, or a \"quoted\" "
            f"string")
    return name, value


def _variants_arg(text: str) -> Path | int:
    """``--variants``: a whole number is K (made on the fly), anything else a folder."""
    if text.strip().isdigit():
        return int(text)
    return Path(text)


def _made_variants(args: argparse.Namespace) -> Path:
    """``--variants K``: the selected tasks' K variants, from the cache or made now.

    Raises:
        RunError: the tasks or K cannot give variants (the reason).
    """
    if args.variant_seed is None:
        args.variant_seed = 0  # recorded in the manifest as the seed used
    count, seed = args.variants, args.variant_seed
    try:
        tasks = select_tasks(args.level, args.tasks, full=args.full_testbed)
        made = cached_variants(
            tasks, count, seed, arenas_dir=args.arenas_dir,
            workers=min(args.concurrency, os.cpu_count() or 1),
            on_task=lambda o: print(f"variants: {o.task_id}: {len(o.kept)}/{count} kept",
                                    file=sys.stderr, flush=True))
    except (TaskSelectionError, ArenaNotFoundError, ArenaError, VariantRequestError,
            VariantIndexError) as error:
        raise RunError(f"--variants {count}: {error}") from error
    print(f"variants: {len(made.made)} task(s) made now, {len(made.reused)} from the cache; "
          f"{made.folder}", file=sys.stderr)
    return made.folder


def config_from_args(args: argparse.Namespace) -> RunConfig:
    """The run config the parsed flags describe, with the presets of what they chose.

    A setting left at its default takes the chosen agent's, control's or prompt's preset
    (``--model oracle-frames`` plays ``--control action`` with no script cap).

    Raises:
        ConfigError: a value, a combination or a choice's requirement the run cannot use, on
            the field (``flag_of`` names its flag).

    """
    values = {path: value for path, value in vars(args).items() if path in SETTINGS}
    given = {path for path, value in values.items()
             if path == "model" or _as_saved(value) != _as_saved(_DEFAULTS.value_of(path))}
    fill_presets(values, given)
    return RunConfig.from_values(values)


def flag_of(setting: str) -> str:
    """The flag that sets a config field (``model_options.timeout_s`` -> ``--timeout``)."""
    return _flags().get(setting, setting)


@functools.cache
def _flags() -> dict[str, str]:
    return {action.dest: action.option_strings[0] for action in build_parser()._actions
            if action.dest in SETTINGS}


def _given(args: argparse.Namespace, parser: argparse.ArgumentParser) -> list[str]:
    """The flags given: those whose value differs from the command line's default."""
    return [dest for dest, value in vars(args).items()
            if dest != "resume" and _as_saved(value) != _as_saved(parser.get_default(dest))]


def _resume(args: argparse.Namespace, parser: argparse.ArgumentParser) -> RunOutcome:
    """Continue ``--resume RUN_DIR`` with its own settings and the overridable flags given.

    Any other flag given with a value unlike the run's is refused: a resumed run that quietly
    used its old model or trial count would not be what the user asked for.
    """
    run_dir = Path(args.resume)
    check_resumable(run_dir)  # a participant's browser run is continued in the browser
    run = run_config_of(run_dir)
    where = {"out": run_dir.parent, "run_id": run_dir.name}  # flags that name a new run
    conflicts, overrides = [], {}
    given = _given(args, parser)
    selection = _selection_conflict(args, given, run)
    if selection:
        conflicts.append(selection)
    for dest in given:
        value = getattr(args, dest)
        if dest in ("no_progress", *SELECTION):
            continue
        if dest in RESUME_FLAGS:
            overrides[RESUME_FLAGS[dest]] = value
            continue
        then = run.value_of(dest) if dest in SETTINGS else where[dest]
        if _as_saved(value) != _as_saved(then):
            flag = flag_of(dest) if dest in SETTINGS else f"--{dest.replace('_', '-')}"
            had = f"no {flag}" if then is None else _as_saved(then)
            conflicts.append(f"{flag} {_as_saved(value)} (the run has {had})")
    if conflicts:
        raise RunError(f"{run_dir} was started with other settings, which --resume keeps: "
                       + "; ".join(conflicts) + ". Start a new run to change them.")
    return resume_run(run_dir, ResumeOverrides(**overrides), show_progress=not args.no_progress)


SELECTION = ("level", "tasks", "full_testbed")
"""The flags that choose the tasks: a resumed run compares the tasks they choose, not their
spelling (``--tasks 02-10-01,01-04-03`` is the run of ``--tasks 01-04-03,02-10-01``)."""

UNSET = {"level": None, "tasks": None, "full_testbed": False}
"""A selection flag's value when it is not given."""


def _selection_conflict(args: argparse.Namespace, given: list[str],
                        run: RunConfig) -> str | None:
    """How the task selection given with ``--resume`` differs from the run's, or None.

    The flags given are the whole selection, as they would be for a new run (one not given is
    unset: ``--level 1`` alone chooses the level's 4 tasks, whatever ``--tasks`` the run was
    started with); the two selections are compared as the tasks they resolve to (a variants
    run filters its variants' parents among all tasks).

    Raises:
        RunError: a selection flag given is malformed (a bad level or task id).

    """
    flags = [dest for dest in SELECTION if dest in given]
    if not flags:
        return None
    for dest in ("level", "tasks"):  # malformed values are said as such, not as a difference
        if dest in flags:
            try:
                select_tasks(**{dest: getattr(args, dest)}, full=True)
            except TaskSelectionError as error:
                raise RunError(f"{flag_of(dest)}: {error}") from None
    then = {dest: run.value_of(dest) for dest in SELECTION}
    now = {dest: getattr(args, dest) if dest in flags else UNSET[dest] for dest in SELECTION}
    if _tasks_chosen(now, run) == _tasks_chosen(then, run):
        return None
    said = " ".join(_selection_flag(dest, now[dest]) for dest in flags)
    started = " ".join(_selection_flag(dest, then[dest]) for dest in SELECTION
                       if then[dest] not in (None, False)) or "no --level or --tasks (every task)"
    lacking = "; ".join(f"no {flag_of(dest)}" for dest in flags if then[dest] in (None, False))
    return (f"{said} (the run has {lacking}; it was started with {started})" if lacking
            else f"{said} (the run was started with {started})")


def _tasks_chosen(selection: dict[str, Any], run: RunConfig) -> list | None:
    """The tasks a selection resolves to, as the run resolves it; None if it chooses none."""
    try:
        return select_tasks(selection["level"], selection["tasks"],
                            full=selection["full_testbed"] or run.variants is not None)
    except TaskSelectionError:  # nothing matches, or a task outside the subset
        return None


def _selection_flag(dest: str, value: Any) -> str:
    """``--tasks 01-04-03``, ``--full-testbed``: a selection flag as typed."""
    return flag_of(dest) if value is True else f"{flag_of(dest)} {value}"


def _as_saved(value: Any) -> Any:
    """A flag's value as the manifest stores it (paths as strings)."""
    return str(value) if isinstance(value, Path) else value


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run the suite, print where the results are."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.model and not args.resume:
        parser.error("--model is required (unless --resume continues an earlier run)")
    if args.dry_run and args.resume:
        parser.error("--dry-run plans a new run; it does not combine with --resume")
    for dest, (option, what) in AGENT_FLAGS.items():
        if getattr(args, dest) is not None and args.model and not _takes(args.model, option):
            users = " or ".join(f"--model {name}" for name, entry in AGENTS.items()
                                if option in entry.options)
            parser.error(f"{flag_of(dest)} is for {users} ({what}); --model {args.model} "
                         "does not use it")
    if args.variant_seed is not None and not isinstance(args.variants, int):
        parser.error("--variant-seed is the seed of --variants K (a number of variants)")
    if args.dry_run and isinstance(args.variants, int):
        parser.error("--dry-run writes nothing, and --variants K would make variants: make "
                     "them first (a run, or python -m llm_aai.variants make) and plan with "
                     "--variants DIR")
    config = None
    if not args.resume:
        try:
            config = config_from_args(args)
        except ConfigError as error:  # as the run's own ConfigErrors are said, in _run
            print(f"error: {error.says(flag_of)}", file=sys.stderr)
            return 2
    with stop_on_signals() as terminated:
        return _run(args, config, parser, terminated)


def _takes(model: str, option: str) -> bool:
    """Whether the agent ``model`` uses the option (one another agent's flag sets)."""
    entry = AGENTS.get(model)
    return option in (entry.options if entry is not None else MODEL_OPTIONS)


def _run(args: argparse.Namespace, config: RunConfig | None, parser: argparse.ArgumentParser,
         terminated: list[int]) -> int:
    """Start or resume the run; turn its errors and interruptions into messages and exit codes.

    ``config`` is the new run's (None with ``--resume``).
    """
    try:
        if config is None:
            outcome = _resume(args, parser)
        elif args.dry_run:
            plan, estimate = estimate_run(config)
            print("\n".join(["dry run: nothing is called or written", *plan,
                              *estimate.lines()]))
            return 0
        else:
            if isinstance(config.variants, int):
                config = dataclasses.replace(config, variants=_made_variants(args),
                                             variant_seed=args.variant_seed)
            outcome = start_run(config, out=args.out, run_id=args.run_id,
                                show_progress=not args.no_progress)
    except ConfigError as error:
        print(f"error: {error.says(flag_of)}", file=sys.stderr)
        return 2
    except RunInterrupted as interrupted:
        stopped_by = STOP_SIGNALS.get(terminated[0], "interrupted") if terminated else "interrupted"
        print(f"\n{stopped_by}: {interrupted}", file=sys.stderr)
        return 128 + terminated[0] if terminated else 130
    except RunError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted before the run started (variants being made are kept: the same "
              "command resumes them)" if isinstance(args.variants, int) else
              "interrupted before the run started", file=sys.stderr)
        return 128 + terminated[0] if terminated else 130
    except EOFError as error:  # the human agent's input ended (Ctrl-D, or a file ran out)
        print(f"\nstopped: {error}; finished episodes are saved; continue with --resume",
              file=sys.stderr)
        return 1
    return _report(outcome, resumed=bool(args.resume))


def _report(outcome: RunOutcome, *, resumed: bool) -> int:
    """Print what the run did and its table; exit 1 if episodes were lost to infrastructure."""
    run_dir, results = outcome.run_dir, outcome.results
    store = RunStore(run_dir)
    finished = store.finished_results().values()
    planned = len(store.read_manifest().episode_seeds)
    done = sum(r.end_reason not in RERUN_END_REASONS for r in finished)
    if resumed and not results and done == planned:
        print(f"nothing left to run: all {planned} episodes of {run_dir} are finished\n")
    else:  # the run's episodes, as the table below counts them, not only this sitting's
        sitting = f"{len(results)} played in this sitting" if resumed else ""
        notes = ([f"{done} of {planned} finished"] if done < planned else []) + (
            [sitting] if sitting else [])
        print(f"{len(finished)} episodes, {sum(r.passed for r in finished)} passed; results "
              f"in {run_dir}" + (f" ({', '.join(notes)})" if notes else "") + "\n")
    if any(r.end_reason not in RERUN_END_REASONS for r in finished):  # what researchers want
        analyze.main([str(run_dir)])
        print("\nfigure: " + module_command("llm_aai.analyze", run_dir, "--plot")
              + f"  # writes {run_dir / 'pass-rates.png'}")
    failed = sum(r.end_reason == "infrastructure" for r in results)
    if failed:  # not a result about the model: say so, and fail the command for scripts
        print(f"{failed} of {len(results)} episodes ended on infrastructure errors (see their "
              "infra_error); retry them with: "
              + module_command("llm_aai.run", "--resume", run_dir),
              file=sys.stderr)
        return 1
    return 0

