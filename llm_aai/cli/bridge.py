"""``python -m llm_aai.bridge``: install the launcher, or serve as the Unity player.

``install DIR`` writes ``DIR/AAI.x86_64`` for ``AnimalAIEnvironment(file_name=...)``, and
``DIR/example-arena.yml`` (the tutorial arena) so that a first try needs no arena of one's own.
``serve ARGS`` is what the launcher runs: ARGS are the Unity player's command line as
``animalai`` writes it (``--mlagents-port``, ``--useCamera``, ``-logFile`` ...).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from llm_aai.bridge.episodes import Episodes
from llm_aai.bridge.launcher import LauncherError
from llm_aai.bridge.launcher import install as install_launcher
from llm_aai.bridge.options import IDLE_TIMEOUT_DEFAULT, IDLE_TIMEOUT_ENV, PlayerOptions
from llm_aai.bridge.player import EXIT_BAD_INPUT, PlayerLog, serve
from llm_aai.prompts import DEFAULT_EXAMPLE
from llm_aai.prompts.examples import ARENA_FILE, EXAMPLES_DIR

EXAMPLE_ARENA = "example-arena.yml"
"""The tutorial arena, written beside the launcher for the documented first try."""


def _player_parser() -> argparse.ArgumentParser:
    """The Unity player's arguments (single-dash Unity flags included)."""
    parser = argparse.ArgumentParser(prog="AAI.x86_64 (llm-aai bridge)", add_help=False,
                                     allow_abbrev=False)
    parser.add_argument("--mlagents-port", type=int, required=True)
    parser.add_argument("--playerMode", type=int, default=1)
    parser.add_argument("--useCamera", action="store_true")
    parser.add_argument("--resolution", type=int, default=84)
    parser.add_argument("--grayscale", action="store_true")
    parser.add_argument("--useRayCasts", action="store_true")
    parser.add_argument("--raysPerSide", type=int, default=2)
    parser.add_argument("--rayMaxDegrees", type=float, default=60.0)
    parser.add_argument("--decisionPeriod", type=int, default=3)
    parser.add_argument("-logFile", "-logfile", dest="log_file", type=Path)
    parser.add_argument("-nographics", action="store_true")
    parser.add_argument("-batchmode", action="store_true")
    return parser


def serve_main(argv: Sequence[str], *, episodes_type: type[Episodes] = Episodes) -> int:
    """Parse the player's arguments and serve; unknown ones are logged and ignored (as Unity).

    ``episodes_type``: see ``llm_aai.bridge.player.serve``.
    """
    parser = _player_parser()
    try:
        args, unknown = parser.parse_known_args(list(argv))
    except SystemExit:
        print("[llm-aai bridge] error: bad player arguments (see above); animalai passes "
              "--mlagents-port PORT", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        idle_timeout = float(os.environ.get(IDLE_TIMEOUT_ENV, IDLE_TIMEOUT_DEFAULT))
    except ValueError:
        print(f"[llm-aai bridge] error: {IDLE_TIMEOUT_ENV}="
              f"{os.environ[IDLE_TIMEOUT_ENV]!r} is not a number of seconds", file=sys.stderr)
        return EXIT_BAD_INPUT
    options = PlayerOptions(
        port=args.mlagents_port, player_mode=args.playerMode, use_camera=args.useCamera,
        resolution=args.resolution, grayscale=args.grayscale, use_rays=args.useRayCasts,
        rays_per_side=args.raysPerSide, ray_max_degrees=args.rayMaxDegrees,
        decision_period=args.decisionPeriod, log_file=args.log_file,
        no_graphics=args.nographics, idle_timeout=idle_timeout)
    log = PlayerLog(options.log_file)
    if unknown:
        log(f"ignoring arguments the bridge does not know: {' '.join(unknown)}")
    if options.no_graphics and options.use_camera:
        log("warning: -nographics with the camera on: the Unity player would send empty "
            "frames; the bridge renders them anyway")
    return serve(options, log, episodes_type=episodes_type)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``install`` or ``serve``; return the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["serve"]:
        return serve_main(argv[1:])
    parser = argparse.ArgumentParser(
        prog="python -m llm_aai.bridge",
        description="Serve llm-aai's embedded simulator to animalai in place of the Unity "
                    "player.")
    commands = parser.add_subparsers(dest="command", required=True)
    install = commands.add_parser(
        "install", help=f"write the launcher DIR/AAI.x86_64 and DIR/{EXAMPLE_ARENA}")
    install.add_argument("directory", type=Path, metavar="DIR")
    commands.add_parser("serve", help="run as the player (what the launcher does)")
    args = parser.parse_args(argv)

    try:
        path = install_launcher(args.directory)
        arena = path.parent / EXAMPLE_ARENA
        shutil.copyfile(EXAMPLES_DIR / DEFAULT_EXAMPLE / ARENA_FILE, arena)
    except (LauncherError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(path)
    print(arena)
    return 0
