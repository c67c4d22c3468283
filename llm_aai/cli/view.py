"""``python -m llm_aai.view``: browse runs and episodes in a static web site.

Exit status: 0 when the site was built (and, with ``--serve``, after Ctrl-C); 128 + the
signal's number after SIGTERM or SIGHUP, which stop serving as Ctrl-C does (the temporary
folder is removed either way); 2 on bad input (not a run directory, a malformed log; while
serving, a log that turns malformed is reported and the last good site stays up).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from llm_aai.analysis import RunDirectoryError
from llm_aai.cli.signals import STOP_SIGNALS, stop_on_signals
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
    parser.add_argument("--out", type=Path, metavar="SITE",
                        help="the site's directory; open SITE/index.html (default: ./site, "
                             "or with --serve a temporary folder, removed when serving stops)")
    parser.add_argument("--serve", nargs="?", type=int, const=DEFAULT_PORT, metavar="PORT",
                        help=f"serve the site on 127.0.0.1:PORT (default {DEFAULT_PORT}) and "
                             "rebuild it as the runs add episodes, until Ctrl-C")
    parser.add_argument("--arenas-dir", type=Path, metavar="DIR",
                        help="where the arena files for the maps are (default: where the run "
                             "found them, its --arenas-dir or the folder its manifest records, "
                             "else $LLM_AAI_ARENAS or the testbed cache)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Build (and maybe serve) the site; returns the exit status."""
    args = build_parser().parse_args(argv)
    if args.serve is not None and not 0 <= args.serve <= 65535:
        return _fail(f"--serve: port must be in 0-65535, got {args.serve}")
    with stop_on_signals() as stopped:  # SIGTERM, SIGHUP: as Ctrl-C, the folder removed
        try:
            with _site_folder(args.out, serving=args.serve is not None) as out:
                return _build_or_serve(args, out)
        except KeyboardInterrupt:
            return _stopped(stopped[0] if stopped else None)


@contextmanager
def _site_folder(out: Path | None, *, serving: bool) -> Iterator[Path]:
    """Where the site goes, said aloud: ``--out``, else ./site, else (serving) a temporary one.

    A served site is only looked at through the server, so without ``--out`` it is built in a
    temporary folder rather than left in the current one.
    """
    if out is not None or not serving:
        out = Path("site") if out is None else out
        print(f"building the site in {out}", flush=True)
        yield out
        return
    with tempfile.TemporaryDirectory(prefix="llm-aai-site-") as folder:
        print(f"building the site in {folder} (temporary, removed when serving stops; "
              "--out SITE keeps it)", flush=True)
        yield Path(folder)


def _build_or_serve(args: argparse.Namespace, out: Path) -> int:
    builder = SiteBuilder(args.runs, out, args.arenas_dir)
    try:
        if args.serve is None:
            _print_report(builder.build())
            print(f"open {out / 'index.html'}")
            return 0
        serve(builder, args.serve, on_build=_print_report,
              ready=lambda url: print(f"serving {url} (Ctrl-C stops)", flush=True),
              on_error=lambda error: print(f"error: {error} (still serving the last site)",
                                           file=sys.stderr, flush=True))
    except (RunDirectoryError, ReplayInputError) as error:
        return _fail(str(error))
    except OSError as error:
        return _fail(f"cannot build or serve the site: {error}")
    return 0


def _stopped(signum: int | None) -> int:
    """Serving (or building) stopped: 0 after Ctrl-C, 128 + the number after SIGTERM, SIGHUP."""
    if signum in STOP_SIGNALS:
        print(f"stopped: {STOP_SIGNALS[signum]}", flush=True)
        return 128 + signum
    print("stopped", flush=True)
    return 0


def _print_report(report) -> None:
    print(f"{report.out}: {report.episodes} episodes ({report.rendered} pages rendered) in "
          f"{report.seconds:.1f} s", flush=True)
    for problem in report.problems:
        print(f"note: {problem}", flush=True)


def _fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2
