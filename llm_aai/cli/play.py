"""``python -m llm_aai.play ARENA``: play scripts in an arena under the paper's protocol.

Prints one JSON object per turn as soon as it has been played::

    {"turn": 0, "script": null, "health": 99.94, "reward": -0.0294, "done": false, ...}
    {"turn": 1, "script": "Go(3);", "health": 96.88, "reward": -0.0018, "done": false, ...}

Turn 0 is the initial observations, with the health the paper's harness showed the model;
``reward`` is the reward gained during the turn; ``steps`` and ``events`` (goals and zones
touched) are extra fields. A script that does not parse prints a line with an ``error``
field and costs one no-op step, as in a run. Playing stops after the turn that ends the
episode. A script written ``? SCRIPT`` (a line of the scripts file, or ``--script "? Go(5);"``)
is a what-if: it prints what that script would do from there (``"what_if": true``,
``first_event``, ``done``, ``health``, the agent's ``position`` and ``yaw``, the objects
``in_view`` afterwards) and the episode goes on as if it had not been asked. ``--out DIR``
saves the frames (``turn-000-0.png``...); ``--record-example DIR`` saves the whole play as a
worked example for the ``icl`` prompt.

Exit status: 0 played, 1 bad input (missing arena or scripts file, invalid arena), 2 usage
(as ``run``: a bad option, a malformed task id or one not in the testbed).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from llm_aai.arena.catalog import ARENAS_ENV, ArenaNotFoundError, TaskSelectionError
from llm_aai.arena.errors import ArenaError, PlacementError
from llm_aai.env import AnimalAIEnv, resolve_arena
from llm_aai.playback import play_scripts, read_scripts_file, save_frames
from llm_aai.prompts import load_turn_messages
from llm_aai.prompts.examples import record_example
from llm_aai.protocol.what_if import WhatIf


def build_parser() -> argparse.ArgumentParser:
    """Build the command line."""
    parser = argparse.ArgumentParser(
        prog="python -m llm_aai.play",
        description="Play Think/Go/Turn scripts in an Animal-AI arena with the paper's protocol.")
    parser.add_argument("arena", help="an arena YAML file or a testbed task id (e.g. 01-04-03)")
    scripts = parser.add_mutually_exclusive_group()
    scripts.add_argument("--scripts-file", type=Path, metavar="F",
                         help="one script per line (blank lines and # comments skipped)")
    scripts.add_argument("--script", action="append", default=[], metavar="TEXT",
                         help="a script to play; repeat for several turns; '? SCRIPT' asks "
                              "what it would do without playing it")
    parser.add_argument("--out", type=Path, metavar="DIR", help="save every frame here as PNG")
    parser.add_argument("--seed", type=int, default=0, help="reset seed (default 0)")
    parser.add_argument("--backend", default="embedded", choices=("embedded", "unity"))
    parser.add_argument("--unity-build", type=Path, metavar="PATH",
                        help="with --backend unity: the player executable (default: "
                             "$LLM_AAI_UNITY_BUILD, else animalai's own search)")
    parser.add_argument("--resolution", type=int, default=512,
                        help="side of the first-person image in pixels (default 512)")
    parser.add_argument("--arenas-dir", type=Path,
                        help=f"folder of testbed files (default: ${ARENAS_ENV}, then the cache)")
    parser.add_argument("--script-mode", default="strict", choices=("strict", "lenient"))
    example = parser.add_argument_group("worked examples (experiment 2)")
    example.add_argument("--record-example", type=Path, metavar="DIR",
                         help="save the play as a worked example folder (example.json, frames, "
                              "arena copy)")
    example.add_argument("--example-name", help="name of the example (default: DIR's name)")
    example.add_argument("--example-resolution", type=int, default=256,
                         help="side of the example's saved frames (default 256)")
    example.add_argument("--example-description", default="",
                         help="a paragraph describing the example")
    example.add_argument("--prompt", default="icl",
                         help="prompt whose turn messages the example's texts use (default icl)")
    return parser


class _ScriptsFileError(Exception):
    """``--scripts-file`` cannot be read; the message names the option and the file."""


def _scripts(args: argparse.Namespace) -> list[str]:
    """The scripts to play: ``--scripts-file``'s lines, else the ``--script`` texts."""
    if args.scripts_file is None:
        return list(args.script)
    try:
        return read_scripts_file(args.scripts_file)
    except UnicodeDecodeError:
        raise _ScriptsFileError(f"--scripts-file {args.scripts_file}: not UTF-8 text") from None
    except OSError as error:  # no such file, a folder, no permission
        raise _ScriptsFileError(f"--scripts-file {args.scripts_file}: "
                                f"{error.strerror or error}") from None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; return the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.unity_build is not None and args.backend != "unity":
        parser.error("--unity-build needs --backend unity")

    try:
        arena = resolve_arena(args.arena, args.arenas_dir)
        scripts = _scripts(args)
        messages = None
        if args.record_example is not None:
            messages = load_turn_messages(args.prompt)
    except TaskSelectionError as error:  # checked as run checks --tasks, and said the same
        print(f"error: {error}", file=sys.stderr)
        return 2
    except (FileNotFoundError, ArenaNotFoundError, KeyError, _ScriptsFileError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1

    played = []
    try:
        kwargs = {"file_name": args.unity_build} if args.unity_build is not None else None
        env = AnimalAIEnv(arena, resolution=args.resolution, backend=args.backend,
                          arenas_dir=args.arenas_dir, backend_kwargs=kwargs)
        check = getattr(env.backend, "check", None)
        if check is not None:
            try:
                check()
            except RuntimeError:
                env.close()
                raise
    except (ImportError, RuntimeError, ValueError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    try:
        for turn in play_scripts(env, scripts, seed=args.seed, mode=args.script_mode):
            if isinstance(turn, WhatIf):
                print(turn.to_json_line(), flush=True)
                continue
            if args.out is not None:
                save_frames(turn, args.out)
            print(turn.to_json_line(), flush=True)
            played.append(turn)
    except (ArenaError, PlacementError, NotImplementedError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    finally:
        env.close()

    if args.record_example is not None:
        source = {"kind": "play", "backend": args.backend, "seed": args.seed,
                  "resolution_played": args.resolution, "script_mode": args.script_mode,
                  "turn_messages": args.prompt, "arena_source": str(args.arena)}
        example = record_example(
            args.example_name or args.record_example.name, played, messages,
            arena_path=arena, description=args.example_description, source=source)
        saved = example.save(args.record_example, resolution=args.example_resolution)
        print(json.dumps({"example": str(args.record_example), "name": saved.name,
                          "sha256": saved.sha256}), file=sys.stderr)
    return 0
