"""``python -m llm_aai.run``: evaluate an agent on testbed tasks under the paper's protocol.

The flags are a ``RunConfig`` (``llm_aai.runner.config``) spelled for the command line:
``FLAG_FIELDS`` names the config field each flag sets, and the flag's default is read from
there. The run itself is ``llm_aai.runner``'s ``start_run`` / ``resume_run``.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

from llm_aai.agents.registry import AGENTS
from llm_aai.arena import ArenaError
from llm_aai.arena.catalog import ArenaNotFoundError, TaskSelectionError, select_tasks
from llm_aai.cli import analyze
from llm_aai.cli.hints import module_command
from llm_aai.frames import FRAME_KINDS
from llm_aai.llm.aliases import MODEL_ALIASES
from llm_aai.llm.cache import default_cache_dir
from llm_aai.logs import RunStore
from llm_aai.logs.store import RERUN_END_REASONS
from llm_aai.perception import FRAMES
from llm_aai.perception.observer import OBSERVATIONS
from llm_aai.protocol.across_tasks import CONTEXTS, ORDERS, PER_TASK, TESTBED_ORDER
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
from llm_aai.runner.config import FLAG_FIELDS, MAX_RESOLUTION, MIN_RESOLUTION, ConfigError
from llm_aai.sim.simulator import PHYSICS_BUILDS
from llm_aai.variants import VariantIndexError, VariantRequestError
from llm_aai.variants.cache import cached_variants

__all__ = ["build_parser", "config_from_args", "default_run_id", "main"]

RESUME_FLAGS = {"cache": "cache_dir", "concurrency": "concurrency", "arenas_dir": "arenas_dir",
                "api_base": "api_base", "budget_usd": "budget_usd",
                "stop_after_failures": "stop_after_failed_episodes",
                "unity_build": "unity_build",
                "price_per_mtok": "price_per_mtok"}
"""Flags a resumed run may change -> their ``ResumeOverrides`` field. Giving any other config
flag with a value unlike the run's is refused rather than silently ignored."""

_DEFAULTS = RunConfig(model="")  # read for its defaults only


def _default(path: str) -> Any:
    """The config's default for a dotted field path (``"protocol.max_scripts"``)."""
    return _field(_DEFAULTS, path)


def _field(config: Any, path: str) -> Any:
    return functools.reduce(getattr, path.split("."), config)


def _with_field(config: Any, path: str, value: Any) -> Any:
    """A copy of a (nested) frozen config with one dotted field set."""
    name, _, rest = path.partition(".")
    inner = _with_field(getattr(config, name), rest, value) if rest else value
    return dataclasses.replace(config, **{name: inner})


def build_parser() -> argparse.ArgumentParser:
    """The command line; each setting's default is the run config's (``RunConfig``)."""
    parser = _OneLineErrors(
        prog="python -m llm_aai.run",
        description="Evaluate an LLM (or a built-in agent) on Animal-AI testbed tasks.",
    )
    parser.add_argument("--model", help=_model_help())
    parser.add_argument("--level", help="levels, e.g. 1-10 or 1,3,5 (default: all 10)")
    parser.add_argument("--tasks", help="comma-separated task ids, e.g. 01-04-03,02-10-01")
    parser.add_argument("--full-testbed", action="store_true", default=_default("full_testbed"),
                        help="select from all 900 testbed tasks instead of the 40-task subset")
    parser.add_argument("--trials", type=_at_least(1), default=_default("trials"),
                        help="episodes per task, each with its own seed (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=_default("seed"),
                        help="run seed; each episode's seed derives from it, the task and the "
                             "trial, and is recorded in the manifest (default: %(default)s)")
    parser.add_argument("--backend", default=_default("backend"), choices=("embedded", "unity"),
                        help="embedded: our MuJoCo simulator (default); unity: the Animal-AI "
                             "build through the animalai package")
    parser.add_argument("--physics-build", default=_default("physics_build"),
                        choices=PHYSICS_BUILDS,
                        help="with the embedded backend, the Animal-AI build whose physics to "
                             "follow: 3.x (the paper's, 3.1.3; default) or 2019 (the Olympics "
                             "build: bounce balls bounce); recorded in the manifest")
    parser.add_argument("--unity-build", type=Path, metavar="PATH",
                        default=_default("unity_build"),
                        help="with --backend unity: the player executable (default: "
                             "$LLM_AAI_UNITY_BUILD, else animalai's own search)")
    parser.add_argument("--resolution", type=int, default=_default("resolution"),
                        help=f"square frame size in pixels, {MIN_RESOLUTION} to {MAX_RESOLUTION} "
                             "(default: %(default)s)")
    parser.add_argument("--frames", default=_default("frames.kind"), choices=FRAME_KINDS,
                        help="how frames are sent and logged: jpeg (as in the paper's "
                             "recording, default) or png (lossless)")
    parser.add_argument("--jpeg-quality", type=_at_least(1, at_most=95),
                        default=_default("frames.quality"), help="1-95 (default: %(default)s)")
    parser.add_argument("--prompt", default=_default("prompt"),
                        help="react (experiment 1, default), icl (experiment 2: a worked "
                             "example first), plan (plan-then-act: a map of the arena, one "
                             "program executed open-loop), or a prompt file")
    parser.add_argument("--example", type=Path,
                        help="with --prompt icl: an example directory to use instead of the "
                             "built-in tutorial (see python -m llm_aai.prompts.examples)")
    parser.add_argument("--observation", default=_default("observation"), choices=OBSERVATIONS,
                        help="what each message shows: image (the paper's, default), text (a "
                             "description of what the eye sees: objects, distances, bearings) "
                             "or both; text needs the embedded backend")
    parser.add_argument("--frame", default=_default("frame"), choices=FRAMES,
                        help="the text's frame of reference: egocentric (distance and bearing, "
                             "default) or allocentric (arena coordinates and your own pose)")
    parser.add_argument("--script-mode", default=_default("script_mode"),
                        choices=("strict", "lenient"),
                        help="strict: the paper's grammar (default); lenient: also repair code "
                             "fences, prose, lowercase and a missing final ';', logging each")
    parser.add_argument("--max-scripts", type=_at_least(0),
                        default=_default("protocol.max_scripts"),
                        help="scripts per episode (the paper: %(default)s); 0: no cap, play "
                             "to the arena's time limit (needs --max-replies)")
    modes = parser.add_argument_group("control and sensing modes (beyond the paper)")
    modes.add_argument("--control", default=_default("modes.control"),
                       choices=("script", "frame"),
                       help="script: a Think/Go/Turn script per reply (the paper, default); "
                            "frame: one of AAI's 9 actions per reply, repeated up to x4, "
                            "then a new observation (needs --max-replies)")
    modes.add_argument("--max-replies", type=_at_least(1), metavar="N",
                       default=_default("protocol.max_replies"),
                       help="cost guard: replies per episode, for --control frame and "
                            "--max-scripts 0")
    modes.add_argument("--observe-every", type=_at_least(1), metavar="N",
                       default=_default("modes.observe_every"),
                       help="also show a frame every N steps of a reply, sent in order with "
                            "the next observation")
    modes.add_argument("--filmstrip", action="store_true", default=_default("modes.filmstrip"),
                       help="with --observe-every: join the frames taken during a reply into "
                            "one labelled image (two images per turn)")
    modes.add_argument("--context", default=_default("modes.context"), choices=CONTEXTS,
                       help="per-task: each task its own conversation (the paper, default); "
                            "across-tasks: the tasks of a trial in one conversation, each "
                            "task's outcome told before the next (trials run in parallel, "
                            "a trial's tasks one after another)")
    modes.add_argument("--order", default=_default("modes.order"), choices=ORDERS,
                       help="with --context across-tasks: testbed (the tasks' order, default) "
                            "or shuffled (each trial its own order, drawn from --seed)")
    parser.add_argument("--initial-observations", type=_at_least(1),
                        default=_default("protocol.initial_observations"),
                        help="observations before the first script (the paper: %(default)s); "
                             "the first turn needs at least one image")
    parser.add_argument("--concurrency", type=_at_least(1), default=_default("concurrency"),
                        help="episodes played at once (default: %(default)s); worth raising "
                             "for models, which mostly wait on HTTP")
    parser.add_argument("--max-relaunches", type=_at_least(0),
                        default=_default("max_relaunches"),
                        help="relaunches of a trial whose model calls kept failing "
                             "(default: %(default)s)")
    parser.add_argument("--relaunch-delay", type=float, default=_default("relaunch_delay_s"),
                        help="seconds before the n-th relaunch, times n (default: %(default)g)")
    parser.add_argument("--stop-after-failures", type=_at_least(1), metavar="N",
                        default=_default("stop_after_failed_episodes"),
                        help="stop the run after N episodes in a row lost to infrastructure "
                             "errors (model server down, wrong --api-base); default %(default)s")
    parser.add_argument("--budget-usd", type=_positive_float,
                        help="start no more episodes once the run has cost this much, counting "
                             "every finished attempt and earlier invocations (raise it with "
                             "--resume)")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR,
                        help="folder for run directories (default: %(default)s)")
    parser.add_argument("--run-id", help="name of the run directory (default: timestamp+model)")
    parser.add_argument("--resume", type=Path, metavar="RUN_DIR",
                        help="continue a run: finished episodes are kept, others rerun")
    parser.add_argument("--arenas-dir", type=Path,
                        help="local folder of testbed YAMLs (else $LLM_AAI_ARENAS or the cache)")
    parser.add_argument("--variants", type=_variants_arg, metavar="DIR|K",
                        help="play the validated variants in DIR (python -m llm_aai.variants "
                             "make) instead of the testbed files; --level/--tasks pick parents. "
                             "A number K instead: make K variants of each task on the fly, "
                             "cached in $XDG_CACHE_HOME/llm-aai/variants (a folder named by a "
                             "number: ./3)")
    parser.add_argument("--variant-seed", type=int, default=None, metavar="S",
                        help="with --variants K: the generation seed (default 0)")
    llm = parser.add_argument_group("model options")
    llm.add_argument("--api-base", help=("base URL of the provider's API: a local "
                                         "OpenAI-compatible server, a proxy, or "
                                         "llm_aai.llm.fake_server"))
    llm.add_argument("--temperature", type=float, default=_default("model_options.temperature"),
                     help="(default: %(default)g)")
    llm.add_argument("--max-tokens", type=int, default=_default("model_options.max_tokens"),
                     help="reply length limit per call (default: %(default)s)")
    llm.add_argument("--timeout", type=_positive_float,
                     default=_default("model_options.timeout_s"),
                     help="seconds per model call (default: %(default)g)")
    llm.add_argument("--max-retries", type=_at_least(0),
                     default=_default("model_options.max_retries"),
                     help="retries of a call on 429, 5xx and timeouts, with backoff and "
                          "Retry-After (default: %(default)s)")
    llm.add_argument("--provider-concurrency", type=_at_least(1),
                     help="simultaneous calls to one provider (default: --concurrency)")
    llm.add_argument("--keep-last-images", type=_at_least(1),
                     help="send only the last K images; older ones become a text placeholder")
    llm.add_argument("--prompt-caching", action="store_true",
                     default=_default("model_options.prompt_caching"),
                     help="add Anthropic prompt-caching breakpoints")
    llm.add_argument("--price-per-mtok", type=_prices, metavar="INPUT,OUTPUT",
                     help="dollars per million input and output tokens, for a model litellm "
                          "has no price for (needed with --budget-usd); recorded in the "
                          "manifest")
    llm.add_argument("--replay-from", type=Path,
                     help="with --model replay: the episode directory whose scripts to re-issue")
    parser.add_argument("--oracle-budget", type=_at_least(0),
                        help="with --model oracle or oracle-frames (the oracle per frame, no "
                             "script cap: --control frame --max-scripts 0 --max-replies 2000 "
                             "unless given): search budget per episode in simulated "
                             "steps (default 20000)")
    parser.add_argument("--no-progress", action="store_true", help="no live progress bar")
    parser.add_argument("--cache", nargs="?", type=Path, const=default_cache_dir(),
                        metavar="DIR",
                        help="answer identical requests at temperature 0 from a response cache "
                             f"(default folder: {default_cache_dir()}); a re-run costs nothing")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the plan and an estimate of requests, tokens and dollars; "
                             "call nothing, write nothing")
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
    """The run config the parsed flags describe."""
    config = RunConfig(model=args.model)
    for dest, path in FLAG_FIELDS.items():
        config = _with_field(config, path, _config_value(args, dest))
    return config


def _config_value(args: argparse.Namespace, dest: str) -> Any:
    """A flag's value as the config holds it.

    ``--max-scripts 0``, and any script cap under ``--control frame`` (whose replies are not
    scripts), is no cap (None).
    """
    value = getattr(args, dest)
    if dest == "max_scripts" and (value == 0 or getattr(args, "control", None) == "frame"):
        return None
    return value


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
    run = run_config_of(run_dir)
    where = {"out": run_dir.parent, "run_id": run_dir.name}  # flags that name a new run
    conflicts, overrides = [], {}
    for dest in _given(args, parser):
        value = getattr(args, dest)
        if dest == "no_progress":
            continue
        if dest in RESUME_FLAGS:
            overrides[RESUME_FLAGS[dest]] = value
            continue
        then = _field(run, FLAG_FIELDS[dest]) if dest in FLAG_FIELDS else where[dest]
        if dest in FLAG_FIELDS:
            value = _config_value(args, dest)
        if _as_saved(value) != _as_saved(then):
            conflicts.append(f"--{dest.replace('_', '-')} {_as_saved(value)} "
                             f"(the run has {_as_saved(then)})")
    if conflicts:
        raise RunError(f"{run_dir} was started with other settings, which --resume keeps: "
                       + "; ".join(conflicts) + ". Start a new run to change them.")
    return resume_run(run_dir, ResumeOverrides(**overrides), show_progress=not args.no_progress)


def _as_saved(value: Any) -> Any:
    """A flag's value as the manifest stores it (paths as strings)."""
    return str(value) if isinstance(value, Path) else value


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run the suite, print where the results are."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.model and not args.resume:
        parser.error("--model is required (unless --resume continues an earlier run)")
    if args.unity_build is not None and args.backend != "unity" and not args.resume:
        parser.error("--unity-build needs --backend unity")
    if args.model == "replay" and not args.replay_from and not args.resume:
        parser.error("--model replay needs --replay-from EPISODE_DIR (the scripts to re-issue)")
    if args.dry_run and args.resume:
        parser.error("--dry-run plans a new run; it does not combine with --resume")
    if args.variant_seed is not None and not isinstance(args.variants, int):
        parser.error("--variant-seed is the seed of --variants K (a number of variants)")
    if args.dry_run and isinstance(args.variants, int):
        parser.error("--dry-run writes nothing, and --variants K would make variants: make "
                     "them first (a run, or python -m llm_aai.variants make) and plan with "
                     "--variants DIR")
    if args.filmstrip and args.observe_every is None:
        parser.error("--filmstrip joins the frames of --observe-every N: give --observe-every")
    if args.order != TESTBED_ORDER and args.context == PER_TASK:
        parser.error(f"--order {args.order} orders the tasks of one conversation: give "
                     "--context across-tasks")
    if args.model == ORACLE_FRAMES and not args.resume:
        _oracle_frames_preset(args, parser)
    if args.control == "frame" and args.max_scripts not in (0, _default("protocol.max_scripts")):
        parser.error("--max-scripts caps scripts; --control frame counts replies: use "
                     "--max-replies")
    for flag in ("level", "tasks"):
        if getattr(args, flag) is not None and not getattr(args, flag).strip():
            parser.error(f"--{flag} is empty; leave it out to run every task")
    with _stop_on_signals() as terminated:
        return _run(args, parser, terminated)


ORACLE_FRAMES = "oracle-frames"
ORACLE_FRAMES_MAX_REPLIES = 2000
"""The reply guard ``--model oracle-frames`` sets when none is given: one reply per AAI step
of the longest testbed episode (t = 1000: 1,667 steps), so it never cuts the ceiling short."""


def _oracle_frames_preset(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """``--model oracle-frames``: the ceiling of what the physics allows, in one flag.

    It means ``--control frame --max-scripts 0`` (one action per reply, no script cap) and,
    unless given, ``--max-replies`` enough for the longest episode.
    """
    if args.control != "frame" and args.control != _default("modes.control"):
        parser.error(f"--model {ORACLE_FRAMES} plays --control frame")
    if args.max_scripts not in (0, _default("protocol.max_scripts")):
        parser.error(f"--model {ORACLE_FRAMES} has no script cap; bound it with --max-replies")
    args.control, args.max_scripts = "frame", 0
    if args.max_replies is None:
        args.max_replies = ORACLE_FRAMES_MAX_REPLIES


def _run(args: argparse.Namespace, parser: argparse.ArgumentParser, terminated: list[int]) -> int:
    """Start or resume the run; turn its errors and interruptions into messages and exit codes."""
    try:
        if args.dry_run:
            plan, estimate = estimate_run(config_from_args(args))
            print("\n".join(["dry run: nothing is called or written", *plan,
                              *estimate.lines()]))
            return 0
        if args.resume:
            outcome = _resume(args, parser)
        else:
            if isinstance(args.variants, int):
                args.variants = _made_variants(args)
            outcome = start_run(config_from_args(args), out=args.out, run_id=args.run_id,
                                show_progress=not args.no_progress)
    except ConfigError as error:
        print(f"error: {_flag_of(error.setting)} {error.problem}", file=sys.stderr)
        return 2
    except RunInterrupted as interrupted:
        stopped_by = STOP_SIGNALS[terminated[0]] if terminated else "interrupted"
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


STOP_SIGNALS = {signal.SIGTERM: "terminated (SIGTERM)",
                **({signal.SIGHUP: "hung up (SIGHUP)"} if hasattr(signal, "SIGHUP") else {})}
"""Signals that stop a run as Ctrl-C does -> how the run names them: a scheduler's preemption
or ``kill``, and a closed terminal or a dropped SSH session (POSIX only)."""


@contextmanager
def _stop_on_signals() -> Iterator[list[int]]:
    """Treat SIGTERM and SIGHUP as Ctrl-C, once.

    The run then stops its episodes in flight at their next turn, brings the summary up to
    date and prints the resume command, instead of dying with nothing said. Any later one of
    them is ignored until the process ends (``SIG_IGN``), so the first one's clean-up is not
    cut short, nor the exit after it: the interpreter puts the default action back on
    signals with Python handlers as it shuts down, and a second SIGTERM then killed it
    (exit -15, not 143). A SIGKILL still ends it, and a killed run resumes too.

    Yields:
        A list that holds the signal's number once one has arrived (empty until then); the
        previous handlers are back on exit unless one did.

    """
    received: list[int] = []

    def handle(signum: int, _frame: Any) -> None:
        if not received:
            received.append(signum)
            for number in STOP_SIGNALS:
                signal.signal(number, signal.SIG_IGN)
            raise KeyboardInterrupt

    if threading.current_thread() is not threading.main_thread():  # only it gets signals
        yield received
        return
    previous = {number: signal.signal(number, handle) for number in STOP_SIGNALS}
    try:
        yield received
    finally:
        if not received:  # after one, the process is ending: later ones stay ignored
            for number, handler in previous.items():
                signal.signal(number, handler)


def _flag_of(setting: str) -> str:
    """The flag that sets a config field (``timeout_s`` -> ``--timeout``)."""
    for dest, path in FLAG_FIELDS.items():
        if path == setting or path.endswith(f".{setting}"):
            return f"--{dest.replace('_', '-')}"
    return setting


def _report(outcome: RunOutcome, *, resumed: bool) -> int:
    """Print what the run did and its table; exit 1 if episodes were lost to infrastructure."""
    run_dir, results = outcome.run_dir, outcome.results
    passed = sum(r.passed for r in results)
    store = RunStore(run_dir)
    finished = store.finished_results().values()
    planned = len(store.read_manifest().episode_seeds)
    done = sum(r.end_reason not in RERUN_END_REASONS for r in finished)
    if resumed and not results and done == planned:
        print(f"nothing left to run: all {planned} episodes of {run_dir} are finished\n")
    else:
        print(f"{len(results)} episodes, {passed} passed; results in {run_dir}"
              + (f" ({done} of {planned} finished)" if done < planned else "") + "\n")
    if any(r.end_reason not in RERUN_END_REASONS for r in finished):  # what researchers want
        analyze.main([str(run_dir)])
        print("\nfigure: " + module_command("llm_aai.analyze", run_dir, "--plot",
                                            "pass-rates.png"))
    failed = sum(r.end_reason == "infrastructure" for r in results)
    if failed:  # not a result about the model: say so, and fail the command for scripts
        print(f"{failed} of {len(results)} episodes ended on infrastructure errors (see their "
              "infra_error); retry them with: "
              + module_command("llm_aai.run", "--resume", run_dir),
              file=sys.stderr)
        return 1
    return 0
