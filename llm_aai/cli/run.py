"""``python -m llm_aai.run``: evaluate an agent on testbed tasks under the paper's protocol."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from pathlib import Path


def build_parser() -> argparse.ArgumentParser:
    """The command line; every protocol number is a flag with the paper's value as default."""
    from llm_aai.frames import FRAME_KINDS
    from llm_aai.protocol import PAPER_PROTOCOL as defaults

    parser = argparse.ArgumentParser(
        prog="python -m llm_aai.run",
        description="Evaluate an LLM (or a built-in agent) on Animal-AI testbed tasks.",
    )
    parser.add_argument("--model",
                        help="alias (claude, gpt, gemini), litellm model string, or built-in agent "
                             "(heuristic, random, human, replay)")
    parser.add_argument("--level", help="levels, e.g. 1-10 or 1,3,5 (default: all 10)")
    parser.add_argument("--tasks", help="comma-separated task ids, e.g. 01-04-03,02-10-01")
    parser.add_argument("--full-testbed", action="store_true",
                        help="select from all 900 testbed tasks instead of the 40-task subset")
    parser.add_argument("--trials", type=_at_least(1), default=1,
                        help="episodes per task, each with its own seed (default: 1)")
    parser.add_argument("--seed", type=int, default=0,
                        help="run seed; each episode's seed derives from it, the task and the "
                             "trial, and is recorded in the manifest (default: 0)")
    parser.add_argument("--backend", default="embedded", choices=("embedded", "unity"),
                        help="embedded: our MuJoCo simulator (default); unity: the Animal-AI "
                             "build through the animalai package")
    parser.add_argument("--resolution", type=_at_least(64), default=512,
                        help="square frame size in pixels, at least 64 (default: 512)")
    parser.add_argument("--frames", default="jpeg", choices=FRAME_KINDS,
                        help="how frames are sent and logged: jpeg (as in the paper's "
                             "recording, default) or png (lossless)")
    parser.add_argument("--jpeg-quality", type=_at_least(1, at_most=95), default=75,
                        help="1-95 (default: 75)")
    parser.add_argument("--prompt", default="react",
                        help="react (experiment 1, default), icl (experiment 2: a worked "
                             "example first), or a prompt file")
    parser.add_argument("--example", type=Path,
                        help="with --prompt icl: an example directory to use instead of the "
                             "built-in tutorial (see python -m llm_aai.prompts.examples)")
    parser.add_argument("--script-mode", default="strict", choices=("strict", "lenient"),
                        help="strict: the paper's grammar (default); lenient: also repair code "
                             "fences, prose, lowercase and a missing final ';', logging each")
    parser.add_argument("--max-scripts", type=_at_least(1), default=defaults.max_scripts,
                        help=f"scripts per episode (the paper: {defaults.max_scripts})")
    parser.add_argument("--initial-observations", type=_at_least(1),
                        default=defaults.initial_observations,
                        help="observations before the first script (the paper: 3); the first "
                             "turn needs at least one image")
    parser.add_argument("--concurrency", type=_at_least(1), default=1,
                        help="episodes played at once (default: 1); worth raising for models, "
                             "which mostly wait on HTTP")
    parser.add_argument("--max-relaunches", type=_at_least(0), default=2,
                        help="relaunches of a trial whose model calls kept failing (default: 2)")
    parser.add_argument("--relaunch-delay", type=float, default=5.0,
                        help="seconds before the n-th relaunch, times n (default: 5)")
    parser.add_argument("--stop-after-failures", type=_at_least(1), default=3, metavar="N",
                        help="stop the run after N episodes in a row lost to infrastructure "
                             "errors (model server down, wrong --api-base); default 3")
    parser.add_argument("--budget-usd", type=_positive_float,
                        help="start no more episodes once the run has cost this much, counting "
                             "every finished attempt and earlier invocations (raise it with "
                             "--resume)")
    parser.add_argument("--out", type=Path, default=Path("results"),
                        help="folder for run directories (default: results)")
    parser.add_argument("--run-id", help="name of the run directory (default: timestamp+model)")
    parser.add_argument("--resume", type=Path, metavar="RUN_DIR",
                        help="continue a run: finished episodes are kept, others rerun")
    parser.add_argument("--arenas-dir", type=Path,
                        help="local folder of testbed YAMLs (else $LLM_AAI_ARENAS or the cache)")
    llm = parser.add_argument_group("model options")
    llm.add_argument("--api-base", help=("base URL of the provider's API: a local "
                                         "OpenAI-compatible server, a proxy, or "
                                         "llm_aai.llm.fake_server"))
    llm.add_argument("--temperature", type=float, default=0.0, help="(default: 0)")
    llm.add_argument("--max-tokens", type=int, default=1024,
                     help="reply length limit per call (default: 1024)")
    llm.add_argument("--timeout", type=_positive_float, default=120.0,
                     help="seconds per model call (default: 120)")
    llm.add_argument("--max-retries", type=_at_least(0), default=6,
                     help="retries of a call on 429, 5xx and timeouts, with backoff and "
                          "Retry-After (default: 6)")
    llm.add_argument("--provider-concurrency", type=_at_least(1),
                     help="simultaneous calls to one provider (default: --concurrency)")
    llm.add_argument("--keep-last-images", type=_at_least(1),
                     help="send only the last K images; older ones become a text placeholder")
    llm.add_argument("--prompt-caching", action="store_true",
                     help="add Anthropic prompt-caching breakpoints")
    llm.add_argument("--replay-from", type=Path,
                     help="with --model replay: the episode directory whose scripts to re-issue")
    parser.add_argument("--no-progress", action="store_true", help="no live progress bar")
    return parser


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


def default_run_id(model: str) -> str:
    """A sortable, filesystem-safe run name."""
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in model)
    return f"{stamp}_{safe}"


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run the suite, print where the results are."""
    from llm_aai.runner.app import RunError, RunInterrupted, run_from_args

    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.model and not args.resume:
        parser.error("--model is required (unless --resume continues an earlier run)")
    if args.model == "replay" and not args.replay_from and not args.resume:
        parser.error("--model replay needs --replay-from EPISODE_DIR (the scripts to re-issue)")
    for flag in ("level", "tasks"):
        if getattr(args, flag) is not None and not getattr(args, flag).strip():
            parser.error(f"--{flag} is empty; leave it out to run every task")
    try:
        run_dir, results = run_from_args(args)
    except RunInterrupted as interrupted:
        print(f"\ninterrupted: {interrupted}", file=sys.stderr)
        return 130
    except RunError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted before the run started", file=sys.stderr)
        return 130
    except EOFError as error:  # the human agent's input ended (Ctrl-D, or a file ran out)
        print(f"\nstopped: {error}; finished episodes are saved; continue with --resume",
              file=sys.stderr)
        return 1
    from llm_aai.logs import RunStore

    passed = sum(r.passed for r in results)
    store = RunStore(run_dir)
    finished = store.finished_results().values()
    config = store.read_manifest()["config"]
    planned = len(config["tasks"]) * config["trials"]
    done = sum(r.end_reason != "infrastructure" for r in finished)
    if args.resume and not results and done == planned:
        print(f"nothing left to run: all {planned} episodes of {run_dir} are finished\n")
    else:
        print(f"{len(results)} episodes, {passed} passed; results in {run_dir}"
              + (f" ({done} of {planned} finished)" if done < planned else "") + "\n")
    if any(r.end_reason != "infrastructure" for r in finished):  # what researchers run this for
        from llm_aai.cli import analyze

        analyze.main([str(run_dir)])
        print(f"\nfigure: python -m llm_aai.analyze {run_dir} --plot pass-rates.png")
    failed = sum(r.end_reason == "infrastructure" for r in results)
    if failed:  # not a result about the model: say so, and fail the command for scripts
        print(f"{failed} of {len(results)} episodes ended on infrastructure errors (see their "
              f"infra_error); retry them with: python -m llm_aai.run --resume {run_dir}",
              file=sys.stderr)
        return 1
    return 0
