"""``python -m llm_aai.grounding RUN_DIR``: judge every Think claim of a run against the truth.

Writes ``RUN_DIR/grounding.csv`` (one row per claim) and ``RUN_DIR/grounding_episodes.csv``
(each episode's failure class) and prints the share of true claims per kind. With
``--nearness`` it writes ``RUN_DIR/nearness.csv`` instead: per episode, the walking distance
to the nearest goal at the start and at the end, and the share of it closed
(``llm_aai.grounding.nearness``), which ``analyze A B --compare`` then compares.

Exit status: 0 when every sealed episode was grounded, 1 when some could not be (named on
stderr; their claims are left out of the tables), 2 on bad input.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from llm_aai.grounding import (
    GroundingError,
    claim_rows,
    episode_rows,
    extract,
    ground_run,
    render_summary,
)
from llm_aai.grounding.llm_extract import LlmExtractionError, LlmExtractor
from llm_aai.grounding.nearness import NEARNESS_CSV, NearnessError, measure_run
from llm_aai.llm.errors import LLMRequestError


def build_parser() -> argparse.ArgumentParser:
    """Build the command line."""
    parser = argparse.ArgumentParser(
        prog="python -m llm_aai.grounding",
        description="Re-simulate every sealed episode of an embedded run and judge each claim "
                    "of its Think texts (objects seen or not, bearings, distances, health, "
                    "collections) against the simulator's state at that turn's observation.")
    parser.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="a run directory")
    parser.add_argument("--arenas-dir", type=Path, metavar="DIR",
                        help="where to find the arenas (default: where the run found them, its "
                             "--arenas-dir or the folder its manifest records, else "
                             "$LLM_AAI_ARENAS or the testbed cache; found nowhere: exit 2, "
                             "nothing written)")
    parser.add_argument("--extractor", metavar="MODEL", default=None,
                        help="split Thinks into claims with this model through litellm "
                             "instead of the built-in rules (the claims are verified alike)")
    parser.add_argument("--api-base", metavar="URL", default=None,
                        help="the model's API base URL (with --extractor)")
    parser.add_argument("--nearness", action="store_true",
                        help="instead of the claims: measure how much nearer the nearest goal "
                             "(walking, on the oracle's map) each episode ended than it "
                             "started, into RUN_DIR/nearness.csv (analyze --compare reads it)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command; returns the exit status."""
    args = build_parser().parse_args(argv)
    if not (args.run_dir / "manifest.json").is_file():
        return _fail(f"{args.run_dir}: not a run directory (no manifest.json)")
    if args.api_base is not None and args.extractor is None:
        return _fail("--api-base needs --extractor MODEL")
    if args.nearness:
        if args.extractor is not None:
            return _fail("--nearness measures no claims: leave out --extractor")
        return _nearness(args)
    extractor = extract
    if args.extractor is not None:
        extractor = LlmExtractor(args.extractor, api_base=args.api_base)
    failed: list[str] = []

    def report(message: str) -> None:
        failed.append(message)
        print(f"not grounded: {message}", file=sys.stderr)

    try:
        ground_run(args.run_dir, extractor=extractor, arenas_dir=args.arenas_dir,
                   on_error=report)
    except (GroundingError, LlmExtractionError, LLMRequestError) as error:
        return _fail(str(error))
    print(render_summary(claim_rows(args.run_dir), episode_rows(args.run_dir)))
    print(f"wrote {args.run_dir / 'grounding.csv'} and {args.run_dir / 'grounding_episodes.csv'}")
    if failed:
        print(f"{len(failed)} episode(s) could not be grounded (see above)", file=sys.stderr)
        return 1
    return 0


def _nearness(args) -> int:
    """Write ``nearness.csv`` and print the mean share closed; the exit status."""
    failed: list[str] = []

    def report(message: str) -> None:
        failed.append(message)
        print(f"not measured: {message}", file=sys.stderr)

    try:
        measured = measure_run(args.run_dir, arenas_dir=args.arenas_dir, on_error=report)
    except NearnessError as error:
        return _fail(str(error))
    shares = [m.nearer for m in measured if not math.isnan(m.nearer)]
    mean = f"{sum(shares) / len(shares):.2f}" if shares else "-"
    print(f"{len(measured)} episodes measured; {len(shares)} with a goal to walk to at the "
          f"start: mean share of the way closed {mean} (1 for a pass)")
    print(f"wrote {args.run_dir / NEARNESS_CSV}")
    if failed:
        print(f"{len(failed)} episode(s) could not be measured (see above)", file=sys.stderr)
        return 1
    return 0


def _fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2
