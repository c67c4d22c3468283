"""``python -m llm_aai.view``: browse runs and episodes in a static web site.

Exit status: 0 when the site was built (and, with ``--serve``, after Ctrl-C); 2 on bad input
(not a run directory, a malformed log; while serving, a log that turns malformed is reported
and the last good site stays up).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from llm_aai.analysis import RunDirectoryError
from llm_aai.replay.episode import ReplayInputError
from llm_aai.view import SiteBuilder, serve

DEFAULT_PORT = 8000


def build_parser() -> argparse.ArgumentParser:
    """Build the command line."""
    parser = argparse.ArgumentParser(
        prog="python -m llm_aai.view",
        description="Build a static web site from run directories: runs with their settings "
                    "and pass rates, every episode (filterable), each episode turn by turn "
                    "with the images sent, the replies, a path map and a health curve, and "
                    "each task across models. It works offline, from disk or a zip.",
    )
    parser.add_argument("runs", nargs="+", type=Path, metavar="RUN_DIR",
                        help="run directories (each holds a manifest.json)")
    parser.add_argument("--out", type=Path, default=Path("site"), metavar="SITE",
                        help="the site's directory (default: ./site); open SITE/index.html")
    parser.add_argument("--serve", nargs="?", type=int, const=DEFAULT_PORT, metavar="PORT",
                        help=f"serve the site on 127.0.0.1:PORT (default {DEFAULT_PORT}) and "
                             "rebuild it as the runs add episodes, until Ctrl-C")
    parser.add_argument("--arenas-dir", type=Path, metavar="DIR",
                        help="where the arena files for the maps are (default: the run's own "
                             "--arenas-dir, else $LLM_AAI_ARENAS or the testbed cache)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Build (and maybe serve) the site; returns the exit status."""
    args = build_parser().parse_args(argv)
    if args.serve is not None and not 0 <= args.serve <= 65535:
        return _fail(f"--serve: port must be in 0-65535, got {args.serve}")
    builder = SiteBuilder(args.runs, args.out, args.arenas_dir)
    try:
        if args.serve is None:
            _print_report(builder.build())
            print(f"open {args.out / 'index.html'}")
            return 0
        serve(builder, args.serve, on_build=_print_report,
              ready=lambda url: print(f"serving {url} (Ctrl-C stops)", flush=True),
              on_error=lambda error: print(f"error: {error} (still serving the last site)",
                                           file=sys.stderr, flush=True))
    except (RunDirectoryError, ReplayInputError) as error:
        return _fail(str(error))
    except OSError as error:
        return _fail(f"cannot build or serve the site: {error}")
    except KeyboardInterrupt:
        print("stopped")
    return 0


def _print_report(report) -> None:
    print(f"{report.out}: {report.episodes} episodes ({report.rendered} pages rendered) in "
          f"{report.seconds:.1f} s", flush=True)
    for problem in report.problems:
        print(f"note: {problem}", flush=True)


def _fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2
