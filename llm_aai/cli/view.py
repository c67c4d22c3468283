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
DEFAULT_SITE = "site"
"""The site's folder inside the (first) run's when no ``--out`` is given."""


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
                        help="the site's directory; open SITE/index.html (default: a folder "
                             f"{DEFAULT_SITE!r} inside the first RUN_DIR, or with --serve a "
                             "temporary folder, removed when serving stops)")
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
            with _site_folder(args.out, args.runs[0], serving=args.serve is not None) as out:
                return _build_or_serve(args, out)
        except KeyboardInterrupt:
            return _stopped(stopped[0] if stopped else None)
        except DefaultSiteError as error:
            return _fail(str(error))


class DefaultSiteError(Exception):
    """The default site folder inside the run's cannot be used (a symlink, or not a folder)."""


@contextmanager
def _site_folder(out: Path | None, run_dir: Path, *, serving: bool) -> Iterator[Path]:
    """Where the site goes, said aloud: ``--out``, else in the run's folder or a temporary one.

    Built without ``--out``, the site goes beside the run's logs (``RUN/site``), not into the
    current folder, where it would show in a clone's ``git status``. The run folder came from
    elsewhere, so a ``site`` there that is a symlink or a file is refused, not written through.
    A served site is only looked at through the server, so without ``--out`` it is built in a
    temporary folder.
    """
    if out is not None:
        print(f"building the site in {out}", flush=True)
        yield out
        return
    if not serving:
        out = run_dir / DEFAULT_SITE
        if out.is_symlink() or (out.exists() and not out.is_dir()):
            what = "a symlink" if out.is_symlink() else "not a folder"
            raise DefaultSiteError(f"{out} is {what}; the site is not written there "
                                   "(give --out SITE)")
        print(f"building the site in {out} (inside the run's folder; --out SITE puts it "
              "elsewhere)", flush=True)
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
