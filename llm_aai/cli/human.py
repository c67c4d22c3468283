"""``python -m llm_aai.human serve``: serve testbed levels to people in their browsers.

Examples::

    python -m llm_aai.human serve --tasks 01-04-03,03-01-02 --out results/adults
    python -m llm_aai.human serve --level 1-3 --order shuffled --port 8080 --out results/adults

Participants open the printed address (``/?control=keys`` for the arrow keys). Exit status: 0
after Ctrl-C, 2 on bad input (an unknown task, a missing arena file, a port in use).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from llm_aai.hosts import is_loopback
from llm_aai.human import ORDERS, Study, StudyError, bind, serve
from llm_aai.human.connections import default_max_connections
from llm_aai.human.server import REQUEST_TIMEOUT_S, TAKEOVER_AFTER_S
from llm_aai.runner import RunConfig

DEFAULT_PORT = 8090


def build_parser() -> argparse.ArgumentParser:
    """The command's arguments."""
    parser = argparse.ArgumentParser(
        prog="python -m llm_aai.human",
        description="Human baselines: people play testbed levels in the browser, with the "
                    "LLMs' scripts (default) or the children's arrow keys (?control=keys); "
                    "each participant's levels are an ordinary run under --out.")
    commands = parser.add_subparsers(dest="command", required=True)
    serve_parser = commands.add_parser("serve", help="serve a study until Ctrl-C")
    serve_parser.add_argument("--tasks", help="task ids, e.g. 01-04-03,03-01-02")
    serve_parser.add_argument("--level", help="levels, e.g. 1-3,7")
    serve_parser.add_argument("--full-testbed", action="store_true",
                              help="choose from all 900 tasks, not the 40 of the children")
    serve_parser.add_argument("--arenas-dir", type=Path, metavar="DIR",
                              help="folder of the testbed's arena files (default: "
                                   "$LLM_AAI_ARENAS or the testbed cache)")
    serve_parser.add_argument("--variants", type=Path, metavar="DIR",
                              help="a folder of `variants make`: play the kept variants of "
                                   "the selected tasks instead")
    serve_parser.add_argument("--out", type=Path, required=True, metavar="DIR",
                              help="where each participant's run is made "
                                   "(DIR/human-INTERFACE-PARTICIPANT)")
    serve_parser.add_argument("--order", choices=ORDERS, default="fixed",
                              help="fixed: the tasks in id order; shuffled: an order per "
                                   "participant, drawn from --seed and the participant's id")
    serve_parser.add_argument("--seed", type=int, default=0,
                              help="the run seed of every participant (the same worlds for all)")
    serve_parser.add_argument("--resolution", type=int, default=RunConfig.resolution,
                              help=f"frame size in pixels (default {RunConfig.resolution}, "
                                   "the models')")
    serve_parser.add_argument("--host", default="127.0.0.1",
                              help="address to listen on (default 127.0.0.1: this machine "
                                   "only)")
    serve_parser.add_argument("--port", type=int, default=DEFAULT_PORT,
                              help=f"port (default {DEFAULT_PORT}; 0 picks a free one)")
    serve_parser.add_argument("--max-sessions", type=int, default=8,
                              help="the most participants playing at once (each plays on its "
                                   "own simulator; default 8)")
    serve_parser.add_argument("--takeover-after", type=float, default=TAKEOVER_AFTER_S,
                              metavar="SECONDS",
                              help="a session no page has asked for in this long is "
                                   "abandoned: starting again under its participant id takes "
                                   "it over, its level in play kept as an attempt (default "
                                   f"{TAKEOVER_AFTER_S:g})")
    serve_parser.add_argument("--max-connections", type=int,
                              help="the most connections open at once; past it the longest "
                                   "idle one is closed (default: 256, fewer where the process "
                                   "may open few files; here "
                                   f"{default_max_connections()})")
    serve_parser.add_argument("--request-timeout", type=float, default=REQUEST_TIMEOUT_S,
                              metavar="SECONDS",
                              help="a connection that sends no whole request in this long is "
                                   f"closed (default {REQUEST_TIMEOUT_S:g})")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Serve until Ctrl-C; returns the exit status."""
    args = build_parser().parse_args(argv)
    if not 0 <= args.port <= 65535:
        return _fail(f"--port must be in 0-65535, got {args.port}")
    if args.max_sessions < 1:
        return _fail(f"--max-sessions must be at least 1, got {args.max_sessions}")
    if args.max_connections is not None and args.max_connections < 1:
        return _fail(f"--max-connections must be at least 1, got {args.max_connections}")
    for flag, value in (("--takeover-after", args.takeover_after),
                        ("--request-timeout", args.request_timeout)):
        if not 0 < value < float("inf"):
            return _fail(f"{flag} must be a number of seconds above 0, got {value:g}")
    try:
        study = Study.create(out=args.out, tasks=args.tasks, level=args.level,
                             arenas_dir=args.arenas_dir, full_testbed=args.full_testbed,
                             seed=args.seed, resolution=args.resolution, order=args.order,
                             variants=args.variants)
    except StudyError as error:
        return _fail(str(error))
    try:
        sock = bind(args.host, args.port)
    except OSError as error:
        return _fail(f"cannot listen on {args.host}:{args.port}: {error.strerror or error}")
    if not is_loopback(args.host):
        print(f"warning: listening on {args.host}: anyone who can reach this machine can "
              "start a session", file=sys.stderr)
    print(f"{len(study.tasks)} levels; runs go to {args.out}", flush=True)
    try:
        serve(study, sock, max_sessions=args.max_sessions, max_connections=args.max_connections,
              request_timeout=args.request_timeout, takeover_after=args.takeover_after,
              ready=lambda url: print(f"serving {url} (script mode) and {url}?control=keys "
                                      "(arrow keys); Ctrl-C stops", flush=True))
    except KeyboardInterrupt:
        pass
    return 0


def _fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2
