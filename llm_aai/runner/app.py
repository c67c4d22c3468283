"""Wire a run together from command-line arguments: tasks, agent, env, prompt, store, progress.

Kept apart from the CLI module so that tests and notebooks can start runs programmatically,
and apart from the suite so the suite never sees argparse.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import os
import platform
import subprocess
import sys
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from filelock import Timeout

from llm_aai.frames import FrameFormat
from llm_aai.logs.schema import SCHEMA_VERSION, EpisodeResult
from llm_aai.logs.store import RunStore
from llm_aai.protocol import PaperProtocol
from llm_aai.runner.suite import Progress, Suite, SuiteConfig, episode_id

# Flags that may differ when a run is resumed; everything else comes from the manifest, and
# giving one of those with another value is an error rather than silently ignored.
_RESUME_OVERRIDABLE = {"concurrency", "no_progress", "arenas_dir", "api_base", "budget_usd",
                       "stop_after_failures"}


class RunError(Exception):
    """A problem the user can fix (bad task list, missing key, missing arenas...)."""


class RunInterrupted(RunError):
    """Ctrl-C: finished episodes are kept, the ones in flight are rerun on resume."""


def run_from_args(args: argparse.Namespace) -> tuple[Path, list[EpisodeResult]]:
    """Start or resume the run the arguments describe; return its directory and results."""
    from llm_aai.agents import resolve_agent
    from llm_aai.arena import ArenaError, load_config, resolve_arena_path, select_tasks
    from llm_aai.llm.errors import LLMError

    if args.resume:
        args = _resumed_args(args)
    elif args.arenas_dir is not None:  # the manifest must name the folder from anywhere
        args.arenas_dir = args.arenas_dir.resolve()
    try:
        tasks = select_tasks(args.level, args.tasks, full=args.full_testbed)
        arena_paths = {t.task_id: resolve_arena_path(t.task_id, args.arenas_dir) for t in tasks}
        for path in arena_paths.values():  # a misread arena stops the run before it starts
            load_config(path)
        agent_spec = resolve_agent(args.model, **_agent_options(args))
        frame_format = FrameFormat(args.frames, args.jpeg_quality)
    except (ArenaError, LLMError, ValueError, FileNotFoundError, LookupError) as error:
        raise RunError(_message(error)) from error
    prompt_set = _load_prompts(args.prompt, args.example)
    if args.resume:
        _check_arenas_unchanged(Path(args.resume), arena_paths)
        _check_prompt_unchanged(Path(args.resume), prompt_set)
    replay_seed = None
    if args.model == "replay" and args.replay_from:
        replay_seed = _check_replay_task(Path(args.replay_from), [t.task_id for t in tasks])
    _check_backend(args)

    config = SuiteConfig(
        model=args.model, tasks=tuple(tasks), trials=args.trials, seed=args.seed,
        backend=args.backend, resolution=args.resolution, prompt=args.prompt,
        script_mode=args.script_mode, concurrency=args.concurrency,
        max_relaunches=args.max_relaunches, relaunch_delay_s=args.relaunch_delay,
        budget_usd=args.budget_usd, frames=args.frames, jpeg_quality=args.jpeg_quality,
        stop_after_failed_episodes=args.stop_after_failures,
        protocol=dataclasses.replace(PaperProtocol(), max_scripts=args.max_scripts,
                                     initial_observations=args.initial_observations),
        replay_seed=replay_seed,
    )
    if args.resume:
        run_dir = Path(args.resume)
    elif args.run_id:
        run_dir = Path(args.out) / args.run_id
    else:
        run_dir = _unused_run_dir(Path(args.out), _default_run_id(args.model))
    store = RunStore(run_dir, frame_format)
    if not args.resume and run_dir.exists() and any(run_dir.iterdir()):
        raise RunError(f"{run_dir} already exists; use --resume {run_dir} to continue it")
    try:
        with store.lock():
            if not args.resume:
                store.write_manifest(
                    _manifest(args, run_dir.name, config, agent_spec, prompt_set, arena_paths))
            return run_dir, _run_suite(args, config, store, agent_spec, prompt_set, arena_paths)
    except Timeout as error:
        raise RunError(f"another process is running {run_dir} (it holds {error.lock_file}); "
                       "wait for it to finish, or stop it first") from error


def _run_suite(args, config, store: RunStore, agent_spec, prompt_set, arena_paths):
    """Play the pending episodes and tell the user why the run stopped early, if it did."""
    from llm_aai.agents.replay import ReplayExhausted
    from llm_aai.llm.errors import LLMRequestError

    run_dir = store.root
    suite = Suite(
        config, store,
        make_env=lambda: _make_env(args),
        make_agent=agent_spec.create,
        prompt=prompt_set,
        arena_path=arena_paths.__getitem__,
        on_result=None,
    )
    pending = suite.pending()
    bar = _progress_bar(len(pending), disabled=args.no_progress)
    suite.on_result = lambda result, progress: _update_bar(bar, progress)
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
    not_started = len(pending) - len(results)
    if suite.stopped_by_failures and not_started:
        print(f"stopped: the last {suite.failed_in_a_row} episodes were lost to infrastructure "
              f"errors (last: {results[-1].infra_error}); {not_started} episodes were not "
              f"started. Once the model is reachable, continue with --resume {run_dir}",
              file=sys.stderr)
    if suite.stopped_by_budget and not_started:
        print(f"budget reached: the run has cost ${suite.progress.cost_usd:.2f} of "
              f"${config.budget_usd:.2f}; {not_started} episodes were not "
              f"started. Continue with --resume {run_dir} --budget-usd <more>", file=sys.stderr)
    return results


def _agent_options(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "api_base": args.api_base, "temperature": args.temperature,
        "max_tokens": args.max_tokens, "timeout_s": args.timeout, "max_retries": args.max_retries,
        "max_concurrent": args.provider_concurrency or args.concurrency,
        "keep_last_images": args.keep_last_images, "prompt_caching": args.prompt_caching,
        "replay_from": args.replay_from,
    }


def _check_replay_task(source: Path, selected: list[str]) -> int | None:
    """A logged episode's scripts mean something only in the world they were played in.

    A sealed episode names its task and its seed: the task must be the one selected, and the
    seed is returned for every replayed episode to use (random placements and colours
    depend on it). A scripts file or an unfinished episode names neither, and is replayed
    wherever, and with whatever seed, the run gives it.
    """
    from llm_aai.logs.store import RESULT, read_result

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


def _make_env(args: argparse.Namespace):
    from llm_aai.env import AnimalAIEnv

    return AnimalAIEnv(resolution=args.resolution, backend=args.backend,
                       arenas_dir=args.arenas_dir)


def _check_backend(args: argparse.Namespace) -> None:
    """Build one environment before the run directory exists.

    A missing Unity package or build is then a one-line error that leaves nothing behind.
    """
    from llm_aai.env.backends.unity import UnityUnavailable

    try:
        _make_env(args).close()
    except UnityUnavailable as error:
        raise RunError(str(error)) from error


def _load_prompts(name: str, example: Path | None):
    from llm_aai.prompts import load_prompt_set
    from llm_aai.prompts.examples import ExampleError

    try:
        return load_prompt_set(name, example=example) if example else load_prompt_set(name)
    except (KeyError, ExampleError, FileNotFoundError) as error:
        raise RunError(_message(error)) from error


def _message(error: Exception) -> str:
    """The error's text for the user; ``str()`` of a KeyError would wrap it in quotes."""
    if isinstance(error, KeyError) and error.args:
        return str(error.args[0])
    return str(error)


def _default_run_id(model: str) -> str:
    from llm_aai.cli.run import default_run_id

    return default_run_id(model)


def _resumed_args(args: argparse.Namespace) -> argparse.Namespace:
    """Rebuild the original arguments from the manifest, taking the overridable flags given.

    A flag counts as given when its value differs from the command line's default. Any other
    flag given with a value unlike the run's is refused: a resumed run that quietly used its
    old model or trial count would not be what the user asked for.
    """
    from llm_aai.cli.run import build_parser

    store = RunStore(Path(args.resume))
    try:
        saved = store.read_manifest()["cli_args"]
    except FileNotFoundError as error:
        raise RunError(str(error)) from error
    merged = dict(saved)
    # runs started before the frame format was a choice stored PNG frames
    merged.setdefault("frames", "png")
    merged.setdefault("jpeg_quality", 75)
    parser = build_parser()
    for key, default in vars(parser.parse_args([])).items():  # flags newer than the run
        merged.setdefault(key, default)
    conflicts = []
    for key, value in vars(args).items():
        given = _as_saved(value)
        if key == "resume" or given == _as_saved(parser.get_default(key)):
            continue
        if key in _RESUME_OVERRIDABLE:
            merged[key] = value.resolve() if isinstance(value, Path) else value
        elif given != merged.get(key):
            conflicts.append(f"--{key.replace('_', '-')} {given} (the run has {merged.get(key)})")
    if conflicts:
        raise RunError(f"{args.resume} was started with other settings, which --resume keeps: "
                       + "; ".join(conflicts) + ". Start a new run to change them.")
    merged["resume"] = args.resume
    for key in ("out", "arenas_dir", "replay_from", "example"):
        if merged.get(key) is not None:
            merged[key] = Path(merged[key])
    return argparse.Namespace(**merged)


def _as_saved(value: Any) -> Any:
    """A flag's value as the manifest stores it (paths as strings)."""
    return str(value) if isinstance(value, Path) else value


def _check_arenas_unchanged(run_dir: Path, arena_paths: dict[str, Path]) -> None:
    """Refuse to resume on arena files that differ from the ones the run started with."""
    recorded = RunStore(run_dir).read_manifest().get("arenas", {})
    changed = [f"{task_id} ({path})" for task_id, path in arena_paths.items()
               if task_id in recorded and _sha256(path) != recorded[task_id]]
    if changed:
        raise RunError(f"arena files differ from those {run_dir} started with (checksums in its "
                       f"manifest.json): {', '.join(changed)}; resume with the original "
                       "--arenas-dir, or start a new run")


def _prompt_record(prompt_set) -> dict[str, Any]:
    """What the manifest records about the prompt."""
    return {"name": prompt_set.name, "sha256": prompt_set.sha256,
            "system_text": prompt_set.system_text, **prompt_set.extra_manifest()}


def _check_prompt_unchanged(run_dir: Path, prompt_set) -> None:
    """Refuse to resume with a prompt, turn messages or worked example the run did not use.

    The prompt files live in the package, so a ``git pull`` or an edit between two
    invocations would otherwise change what the model is told halfway through a run.
    """
    recorded = RunStore(run_dir).read_manifest().get("prompt", {})
    current = _prompt_record(prompt_set)

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
    while candidate.exists() and any(candidate.iterdir()):
        n += 1
        candidate = out / f"{run_id}-{n}"
    return candidate


def _manifest(
    args, run_id: str, config: SuiteConfig, agent_spec, prompt_set, arena_paths
) -> dict[str, Any]:
    """Everything needed to know later exactly what ran (never any secret)."""
    cli_args = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
    return {
        "schema_version": SCHEMA_VERSION,
        "run_id": run_id,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "cli_args": cli_args,
        "config": config.to_manifest(),
        "agent": agent_spec.describe(),
        "prompt": _prompt_record(prompt_set),
        "seeds": {"run": config.seed, "episodes": {
            episode_id(task.task_id, trial): config.seed_of(task.task_id, trial)
            for task in config.tasks for trial in range(1, config.trials + 1)}},
        "arenas": {task_id: _sha256(path) for task_id, path in arena_paths.items()},
        "versions": _versions(),
        "git": _git_revision(),
        "host": {"python": platform.python_version(), "platform": platform.platform(),
                 "mujoco_gl": os.environ.get("MUJOCO_GL")},
    }


def _sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


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


def _progress_bar(total: int, *, disabled: bool):
    from tqdm import tqdm

    return tqdm(total=total, unit="episode", desc="episodes", disable=disabled, dynamic_ncols=True)


def _update_bar(bar, progress: Progress) -> None:
    rate = progress.passed / progress.done if progress.done else 0.0
    bar.set_postfix_str(  # before update(), which draws it: the shown rate is never a step late
        f"pass {rate:.0%} infra {progress.infra_failures} "
        f"tok {progress.tokens:,} ${progress.cost_usd:.2f}", refresh=False)
    bar.update(1)
