"""``python -m llm_aai.arenas``: validate arena files, list and fetch the testbed, show a placement.

Subcommands:
    validate PATH...   check files or folders; one ``file:line: field: message`` per problem
    list               the tasks of the children subset (or ``--full`` testbed)
    fetch              download the pinned testbed into the cache (or ``--dest``)
    show ID|PATH       print every object of an arena as an episode with a seed places it

Problems are reported as messages, never tracebacks: exit status 0 means success, 1 means
invalid files or a failed command, 2 a usage error (as ``run``: a bad option, a malformed level
or task id, or one that chooses nothing).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from llm_aai.arena.catalog import (
    ARENAS_ENV,
    SOURCE_ENV,
    ArenaNotFoundError,
    TaskSelectionError,
    pass_mark_of,
    resolve_arena_path,
    select_tasks,
    unity_records,
)
from llm_aai.arena.errors import ArenaError, PlacementError
from llm_aai.arena.fetch import FetchError, fetch_testbed
from llm_aai.arena.placement import place_arena
from llm_aai.arena.yaml_io import check_file, load_config
from llm_aai.env.animalai_env import world_seed

ARENA_SUFFIXES = (".yaml", ".yml")


def build_parser() -> argparse.ArgumentParser:
    """Build the command line."""
    parser = argparse.ArgumentParser(prog="python -m llm_aai.arenas",
                                     description="Animal-AI arena files and the testbed.")
    sub = parser.add_subparsers(dest="command", required=True)

    check = sub.add_parser("validate", help="check arena files (exit 0 only if all are valid)")
    check.add_argument("paths", nargs="+", type=Path, metavar="PATH",
                       help="arena files, or folders searched recursively for *.yaml/*.yml")
    check.add_argument("--no-warnings", action="store_true",
                       help="print errors only (warnings never make a file invalid)")

    listing = sub.add_parser("list", help="list testbed tasks with level and level name")
    listing.add_argument("--full", "--full-testbed", action="store_true",
                         help="all 900 tasks instead of the 40-task children subset")
    listing.add_argument("--level", help="levels, e.g. 3, 1-10 or 1,3,5")
    listing.add_argument("--tasks", help="task ids, e.g. 01-04-03,02-10-01")

    fetch = sub.add_parser("fetch", help="download the pinned testbed (checksummed, resumable)")
    fetch.add_argument("--dest", type=Path, help="target folder (default: the user cache)")
    fetch.add_argument("--source", help="base URL of a mirror holding LL-TT-VV.yaml files "
                                        f"(http(s):// or file://; default: ${SOURCE_ENV}, "
                                        "else the official repository at the pinned commit)")
    fetch.add_argument("--tasks", help="only these task ids (default: all 900)")
    fetch.add_argument("--quiet", action="store_true", help="no progress bar")

    show = sub.add_parser("show", help="place an arena as the episode with --seed does and "
                                       "print its objects")
    show.add_argument("arena", help="a task id (e.g. 04-12-03) or an arena file")
    show.add_argument("--seed", type=_episode_seed, default=0,
                      help="episode seed, as logged in result.json and the manifest's seeds: "
                           "shows the layout that episode played on the embedded backend "
                           "(default 0)")
    show.add_argument("--arena-id", type=int, help="which arena of a multi-arena file")
    show.add_argument("--arenas-dir", type=Path,
                      help=f"folder of testbed files (default: ${ARENAS_ENV}, then the cache)")
    return parser


def _episode_seed(text: str) -> int:
    """Parse ``--seed``: gymnasium refuses negative reset seeds, so no episode has one."""
    try:
        seed = int(text)
    except ValueError:
        seed = -1
    if seed < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, got {text!r}")
    return seed


def _arena_files(paths: list[Path]) -> tuple[list[Path], list[str]]:
    files, missing = [], []
    for path in paths:
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.suffix in ARENA_SUFFIXES)
            if not found:
                missing.append(f"{path}: no *.yaml or *.yml files in this folder")
            files += found
        elif path.exists():
            files.append(path)
        else:
            missing.append(f"{path}: no such file or folder")
    return files, missing


def _validate(args: argparse.Namespace) -> int:
    files, missing = _arena_files(args.paths)
    for line in missing:
        print(line)
    errors = warnings = invalid = 0
    for path in files:
        problems = check_file(path)
        file_errors = sum(p.severity == "error" for p in problems)
        errors += file_errors
        warnings += len(problems) - file_errors
        invalid += bool(file_errors)
        for problem in problems:
            if problem.severity == "error" or not args.no_warnings:
                print(problem)
    print(f"checked {len(files)} file(s): {invalid} invalid, {errors} error(s), "
          f"{warnings} warning(s)", file=sys.stderr)
    return 1 if invalid or missing else 0


def _list(args: argparse.Namespace) -> int:
    tasks = select_tasks(args.level, args.tasks, args.full)
    print(f"{'task':<10} {'level':>5}  level name")
    for task in tasks:
        print(f"{task.task_id:<10} {task.level:>5}  {task.level_name}")
    return 0


def _fetch(args: argparse.Namespace) -> int:
    ids = [t.strip() for t in args.tasks.split(",")] if args.tasks else None
    report = fetch_testbed(args.dest, source=args.source, task_ids=ids,
                           progress=not args.quiet)
    print(f"{report.dest}: {len(report.downloaded)} downloaded, {len(report.skipped)} already "
          "present; all checksums verified")
    return 0


def _show(args: argparse.Namespace) -> int:
    """Print the placement of the episode with ``--seed``.

    An episode does not place its arena from its own seed: the env draws a world seed from it
    (``llm_aai.env.animalai_env.world_seed``) and the embedded backend places from that, so
    this does the same to show what the episode's agent saw.
    """
    import numpy as np

    candidate = Path(args.arena)
    path = candidate if candidate.suffix in ARENA_SUFFIXES or candidate.exists() else (
        resolve_arena_path(args.arena, args.arenas_dir))
    config = load_config(path)
    arena = config.arena(args.arena_id)
    world = world_seed(args.seed)
    placed = place_arena(arena, np.random.default_rng(world), source=str(path))
    mark = pass_mark_of(path.stem if path.stem in unity_records() else None, arena.pass_mark)
    print(f"{path} (episode seed {args.seed}, world seed {world}): t={arena.time_limit} "
          f"pass_mark={mark.value:g}"
          + (f" blackouts={list(arena.blackouts)}" if arena.blackouts else ""))
    if mark.note:
        print(f"note: {mark.note}")
    print(f"{'object':<26} {'x':>6} {'y':>6} {'z':>6}  {'size x,y,z':<20} {'yaw':>6}  rgb")
    for obj in (placed.agent, *placed.objects):
        x, y, z = obj.position
        size = ",".join(f"{v:.2f}" for v in obj.size)
        rgb = ",".join(f"{round(c * 255)}" for c in obj.color)
        print(f"{obj.spec.name:<26} {x:6.2f} {y:6.2f} {z:6.2f}  {size:<20} {obj.yaw:6.1f}  {rgb}")
    for note in placed.dropped:
        print(f"dropped: {note}")
    return 0


COMMANDS = {"validate": _validate, "list": _list, "fetch": _fetch, "show": _show}


def main(argv: list[str] | None = None) -> int:
    """Run one subcommand; return the exit status."""
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except TaskSelectionError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except (ArenaError, PlacementError, FetchError, ArenaNotFoundError, KeyError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"error: {message}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
