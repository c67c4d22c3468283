"""``python -m llm_aai.analyze``: compare runs with children and Olympics agents, per level."""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from dataclasses import replace
from pathlib import Path

import pandas as pd

from llm_aai.analysis import (
    RunDirectoryError,
    load_runs,
    model_summary,
    pass_rates,
    with_reference,
)
from llm_aai.analysis.notes import comparison_notes, notes
from llm_aai.analysis.paired import compare_runs
from llm_aai.analysis.plan_reference import OracleReferences, RunReferences
from llm_aai.analysis.plots import (
    FORMATS,
    LeftOutOfFigure,
    parse_size,
    plot_pass_rates,
    settings_caption,
)
from llm_aai.analysis.probes import (
    plan_metrics_table,
    probe_labelled,
    probe_runs,
    probe_table,
)
from llm_aai.analysis.reference import compared_reference
from llm_aai.analysis.report import (
    compare_report,
    level_report,
    render,
    summary_report,
    task_report,
)
from llm_aai.analysis.stats import Bootstrap, no_interval_legend
from llm_aai.analysis.variants import MEMORISATION_FLAG, has_variants, variants_table
from llm_aai.grounding.nearness import NEARNESS_CSV, NearnessError, read_nearness
from llm_aai.grounding.summary import (
    SummaryInputError,
    by_group,
    claim_rows,
    counted_rows,
    episode_rows,
)
from llm_aai.logs.store import atomic_write_text
from llm_aai.oracle import DEFAULT_BUDGET

CHILDREN = {"complete": "children", "all": "children_all"}


FIGURE_NAME = "pass-rates.png"
"""The figure's name in the run's folder, for ``--plot`` given without a file."""

IN_THE_RUN = Path("\0in-the-run")
"""``--plot``'s value when no file is given (no path holds a NUL byte)."""


def build_parser() -> argparse.ArgumentParser:
    """Build the command line."""
    parser = argparse.ArgumentParser(
        prog="python -m llm_aai.analyze",
        description="Pass rates of one or more runs per level (or task), with Wilson 95% "
                    "intervals, beside children (n=59) and the Animal-AI Olympics top 10.",
    )
    parser.add_argument("runs", nargs="+", type=Path, metavar="RUN_DIR",
                        help="run directories (each holds a manifest.json)")
    parser.add_argument("--plot", type=Path, metavar="FILE", nargs="?", const=IN_THE_RUN,
                        help="write the per-level comparison figure (.png, .svg or .pdf); "
                             f"without FILE, as {FIGURE_NAME} in the run's folder (one run)")
    parser.add_argument("--style", choices=("screen", "paper"), default="screen",
                        help="figure style: 'screen' (12x5 in, default) or 'paper' (print "
                             "type sizes, 300 dpi, no title, a double column wide)")
    parser.add_argument("--size", metavar="SIZE",
                        help="figure size: 'single' or 'double' (journal column widths, 3.5 "
                             "or 7.16 in) or WIDTHxHEIGHT in inches, e.g. 7x3")
    parser.add_argument("--no-caption", action="store_true",
                        help="leave out the caption line with the runs' settings")
    parser.add_argument("--csv", type=Path, metavar="FILE",
                        help="write the table (per --by) with the reference columns as CSV")
    parser.add_argument("--by", choices=("level", "task", "mode", "observation", "variants",
                                         "grounding"),
                        default="level",
                        help="rows of the printed table and the CSV (default: level); mode: "
                             "per model, one column per control and sensing mode, per level; "
                             "observation: per model, one column per probe (image, text, both, "
                             "plan) and per reference population, per level; the plan "
                             "metrics; --plot draws each probe beside the populations; "
                             "variants: per model and level, the originals against their "
                             "variants (run --variants), gaps flagged")
    parser.add_argument("--reference", type=Path, metavar="RUN",
                        help="with --by observation: the plan run whose plans are the plan "
                             "metrics' reference, matched by task and seed (e.g. run --model "
                             "oracle --prompt plan with the same --seed); default: the "
                             "oracle's plans, computed here and cached in "
                             "$XDG_CACHE_HOME/llm-aai/oracle-plans")
    parser.add_argument("--oracle-budget", type=int, default=DEFAULT_BUDGET, metavar="STEPS",
                        help="with --by observation: the search budget of the oracle's "
                             f"reference plans, in simulated steps (default {DEFAULT_BUDGET})")
    parser.add_argument("--compare", action="store_true",
                        help="with exactly two runs RUN_A RUN_B: pair them by task (a variant "
                             "under its testbed task) and print A - B per level for the pass "
                             "rate and the partial credit (progress), with a cluster-bootstrap "
                             "95%% interval over tasks and a paired sign-flip test's p-value")
    parser.add_argument("--seed", type=int, default=Bootstrap().seed,
                        help="seed of the cluster bootstrap over tasks (and of sampled flips); "
                             "the same seed gives the same intervals (default: %(default)s)")
    parser.add_argument("--children", choices=sorted(CHILDREN), default="complete",
                        help="children population: 'complete' = the 59 with all 40 tasks "
                             "(default), 'all' = every child who played the level")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Load the runs, print the tables, write the figure and CSV if asked."""
    args = build_parser().parse_args(argv)
    if args.plot == IN_THE_RUN:
        if len(args.runs) != 1:
            return _fail(f"--plot without a file writes {FIGURE_NAME} into the run's folder: "
                         f"with {len(args.runs)} runs, name the file (--plot FILE)")
        args.plot = args.runs[0] / FIGURE_NAME
    if args.plot and args.plot.suffix.lower() not in FORMATS:
        return _fail(f"{args.plot}: figure format must be one of {', '.join(FORMATS)}")
    if args.size is not None:
        try:
            args.size = parse_size(args.size)
        except ValueError as error:
            return _fail(f"--size: {error}")
    if args.by != "observation" and (args.reference is not None
                                     or args.oracle_budget != DEFAULT_BUDGET):
        return _fail("--reference and --oracle-budget choose the plan metrics' reference "
                     "plans: use them with --by observation")
    if args.oracle_budget < 0:
        return _fail(f"--oracle-budget must be >= 0 steps, got {args.oracle_budget}")
    if args.compare:
        return _compare(args)
    try:
        runs = load_runs(args.runs, with_turns=False)
    except RunDirectoryError as error:
        return _fail(str(error))
    if runs.episodes.empty:
        return _fail("no finished episodes in " + ", ".join(map(str, args.runs)))
    populations = (CHILDREN[args.children], "olympics_top10")
    try:
        return _report(runs, args, populations)
    except BrokenPipeError:  # output piped into head & co.: stop quietly
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the flush at exit
        return 0
    except OSError as error:
        return _fail(f"cannot write output: {error}")


def _report_grounding(runs, args) -> int:
    """Per model and level: the share of true claims per kind, and the failed episodes' classes.

    Reads each run's ``grounding.csv`` and ``grounding_episodes.csv`` (``python -m
    llm_aai.grounding RUN_DIR`` writes them), keeping the episodes and labels of the other
    tables (``grounding.summary.counted_rows``), whose notes it prints.
    """
    claims, episodes = [], []
    for run in runs.runs["path"]:
        try:
            claims += counted_rows(claim_rows(run), run, runs.episodes)
            episodes += counted_rows(episode_rows(run), run, runs.episodes)
        except SummaryInputError as error:
            return _fail(str(error))
    boot = Bootstrap(seed=args.seed)
    table = pd.DataFrame(by_group(claims, episodes, boot),
                         columns=["agent", "level", "what", "value"])
    printed = ("no claims: none of the episodes counted has been grounded" if table.empty else
               table.rename(columns={"agent": "model", "what": "claims or episodes",
                                     "value": "true/checked share [Wilson 95% CI] tasks[..] "
                                              "or count"}).to_string(index=False))
    print(printed)
    print(f"\nclaims: share of checked claims that are true, [Wilson over claims] "
          f"tasks[{boot.describe()}] (unverifiable ones beside it); "
          "episodes: failed episodes classed by their first kind of false claim "
          "(perception: about what is seen); infrastructure failures and episodes ended by a "
          "context overflow excluded" + no_interval_legend(printed) + ".")
    _print_notes(notes(runs, populations=False))
    if args.csv is not None:
        _write_csv(table, args.csv)
    return 0


def _report(runs, args, populations: tuple[str, ...]) -> int:
    """Print the tables and write the files asked for; return the exit status."""
    if args.by == "observation":
        return _report_probes(runs, args, populations)
    if args.by == "variants":
        return _report_variants(runs, args)
    if args.by == "grounding":
        return _report_grounding(runs, args)
    reference = compared_reference(runs.episodes)
    boot = Bootstrap(seed=args.seed)
    levels = pass_rates(runs.episodes, by="level", bootstrap=boot)
    overall = model_summary(runs.episodes, bootstrap=boot, attempts=runs.attempts)
    table = pass_rates(runs.episodes, by="level" if args.by == "mode" else args.by,
                       bootstrap=boot)
    summary = render(summary_report(overall))
    if args.by == "mode":
        table, printed = _mode_tables(runs.episodes, reference, populations, boot)
    elif args.by == "level":
        print(printed := render(level_report(levels, overall, reference, populations)))
    else:
        print(printed := render(task_report(table, reference, populations)))
    print("\nk/n proportion [Wilson 95% CI over pooled trials, as if independent] "
          f"tasks[{boot.describe()}: the one that respects tasks]; +Ni = N "
          "infrastructure failures, excluded; +Nc = N episodes ended by a context overflow, "
          "excluded" + no_interval_legend(printed, summary) + ".")
    print("\n" + summary)
    _print_notes(notes(runs))
    if has_variants(runs.episodes):
        print("note: some episodes were played on variants (run --variants), counted here "
              "under their own ids; compare them with the originals with --by variants")
    if args.csv:
        _write_csv(with_reference(table, reference, populations), args.csv)
    if args.plot:
        return _plot(levels, reference, args, populations, runs, overall=overall)
    return 0


def _mode_tables(episodes, reference, populations: tuple[str, ...], boot: Bootstrap):
    """Print one table per model (and prompt) with a column per mode.

    Returns:
        The tables as one, and the text printed (for the legend under it).
    """
    tables, printed = [], []
    for (model, prompt), played in episodes.groupby(["model", "prompt"], sort=False):
        by_mode = played.assign(label=played["mode"])
        levels = pass_rates(by_mode, by="level", bootstrap=boot)
        print(f"{model} [{prompt}] by mode ({', '.join(pd.unique(by_mode['mode']))}):")
        printed.append(render(level_report(levels, model_summary(by_mode, bootstrap=boot),
                                           reference, populations)))
        print(printed[-1])
        print()
        tables.append(levels.rename(columns={"label": "mode"}).assign(model=model, prompt=prompt))
    return pd.concat(tables, ignore_index=True), "\n".join(printed)
def _report_probes(runs, args, populations: tuple[str, ...]) -> int:
    """Each model's pass rate per level under each probe, the plan metrics, the figure."""
    runs = probe_runs(runs)
    reference = compared_reference(runs.episodes)
    boot = Bootstrap(seed=args.seed)
    table = probe_table(runs.episodes, reference, populations, bootstrap=boot)
    print(printed := render(table))
    print(f"\nk/n proportion [Wilson 95% CI] tasks[{boot.describe()}] per probe; "
          "infrastructure failures and episodes ended by a context overflow excluded; "
          "populations: pooled rate (interquartile range)" + no_interval_legend(printed) + ".")
    _print_notes(notes(runs))
    try:
        references = (RunReferences(args.reference) if args.reference is not None
                      else OracleReferences(budget=args.oracle_budget))
        plans = plan_metrics_table(runs.episodes, references=references)
    except (ValueError, FileNotFoundError, LookupError) as error:
        return _fail(f"plan metrics: {error}")
    if not plans.empty:
        print("\nPlan metrics (means per episode; each plan driven again in the simulator; "
              "lcs, command_f1 and path_efficiency against the reference plan):")
        print(render(plans.round(3)))
        print(_reference_note(references))
    if args.csv:
        _write_csv(table, args.csv)
    if args.plot:
        labelled = probe_labelled(runs.episodes)
        return _plot(pass_rates(labelled, by="level", bootstrap=boot), reference, args,
                     populations, runs, title="Proportion of trials passed per level, by probe",
                     overall=model_summary(labelled, bootstrap=boot))
    return 0


def _report_variants(runs, args) -> int:
    """Each model's pass rate on the originals against that on their variants, per level."""
    if args.plot:
        return _fail("--plot draws levels against the reference populations; with --by "
                     "variants write --csv and plot that table")
    try:
        boot = Bootstrap(seed=args.seed)
        table = variants_table(runs.episodes, bootstrap=boot)
    except ValueError as error:
        return _fail(str(error))
    shown = table.assign(level=table["level"].map(lambda v: v or "all"),
                         gap=table.apply(_gap_cell, axis=1),
                         p=table["p_value"].map(lambda p: "-" if p != p else f"{p:.3g}"))
    print(printed := render(shown[["label", "level", "level_name", "tasks", "original",
                                   "variant", "gap", "p", "flag"]]))
    print("\nk/n proportion [Wilson 95% CI] tasks[interval over tasks]; originals are the "
          "parents of the variants played; gap = original - variant [Newcombe 95% CI, trials "
          f"as if independent] tasks[{boot.describe()}, each task with its variants]; p: "
          "paired sign-flip test over tasks; "
          f"'{MEMORISATION_FLAG}': the originals are passed more often beyond the interval "
          "over tasks (a pointer, not a test of contamination)" + no_interval_legend(printed))
    flagged = table[table["flag"] != ""]
    for row in flagged.itertuples(index=False):
        where = "over all levels" if row.level == 0 else f"on level {row.level}"
        print(f"note: {row.label} passes the originals more often than their variants "
              f"{where} ({row.original} against {row.variant}): {MEMORISATION_FLAG}")
    _print_notes(notes(runs, populations=False))
    if args.csv:
        _write_csv(table, args.csv)
    return 0


def _compare(args) -> int:
    """Print (and with --csv write) run A against run B, paired by task."""
    if len(args.runs) != 2:
        return _fail(f"--compare takes exactly two run directories (RUN_A RUN_B), got "
                     f"{len(args.runs)}")
    if args.plot or args.by != "level":
        return _fail("--compare prints its own table: leave out --plot and --by")
    if args.runs[0].resolve() == args.runs[1].resolve():
        return _fail(f"--compare: {args.runs[0]} and {args.runs[1]} are the same run "
                     "directory; give two different runs")
    try:
        a, b = (load_runs([path], with_turns=False) for path in args.runs)
        if all((path / NEARNESS_CSV).is_file() for path in args.runs):
            a, b = (replace(side, episodes=side.episodes.assign(
                        nearer=side.episodes["episode_id"].map(read_nearness(path))))
                    for side, path in zip((a, b), args.runs, strict=True))
        table = compare_runs(a.episodes, b.episodes, name_a=str(args.runs[0]),
                             name_b=str(args.runs[1]), bootstrap=Bootstrap(seed=args.seed))
    except (RunDirectoryError, NearnessError, ValueError) as error:
        return _fail(str(error))
    labels = [", ".join(pd.unique(side.episodes["label"])) for side in (a, b)]
    print(f"A = {args.runs[0]} ({labels[0]}); B = {args.runs[1]} ({labels[1]})")
    print(render(compare_report(table)))
    print("\nA, B: each run's rate over the tasks both played (infrastructure failures and "
          "context overflows left out); passed = proportion of trials passed, progress = mean "
          "share of the pass mark's reward obtained (1 for a pass)"
          + (", nearer = mean share of the walking distance to the nearest goal closed "
             "(1 for a pass; from each run's nearness.csv)" if "nearer" in set(table["measure"])
             else "") + f". A - B [{Bootstrap(seed=args.seed).describe()}, "
          "tasks resampled in pairs]; p: two-sided paired sign-flip test over the tasks whose "
          "rates differ (a tie has no sign; exact, or * sampled flips beyond 16 of them).")
    _print_notes(comparison_notes(a, b))
    if args.csv:
        _write_csv(table, args.csv)
    return 0


def _write_csv(table: pd.DataFrame, path: Path) -> None:
    """Write the table whole or not at all (``atomic_write_text``), and say where."""
    atomic_write_text(path, table.to_csv(index=False))
    print(f"\ntable written to {path}")


def _gap_cell(row) -> str:
    if row["gap"] != row["gap"]:  # NaN: one side has no episodes
        return "-"
    over_tasks = ("-" if row["gap_boot_low"] != row["gap_boot_low"]
                  else f"[{row['gap_boot_low']:+.2f}, {row['gap_boot_high']:+.2f}]")
    return f"{row['gap']:+.2f} [{row['gap_low']:+.2f}, {row['gap_high']:+.2f}] tasks{over_tasks}"


def _reference_note(references) -> str:
    """Where the plan metrics' reference plans came from."""
    if isinstance(references, RunReferences):
        return f"reference plans: the plans of run {references.run_dir}, by task and seed"
    return (f"reference plans: the oracle's (budget {references.budget} steps), "
            f"{references.computed} computed, {references.cached} from the cache in "
            f"{references.cache_dir}")


def _plot(levels, reference, args, populations: tuple[str, ...], runs,
          title: str = "Proportion of trials passed per level", *, overall) -> int:
    """Write the figure; models it leaves out become notes, a figure it cannot draw an error."""
    path = args.plot
    caption = None if args.no_caption else settings_caption(runs.runs)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            plot_pass_rates(levels, reference, path, populations=populations, style=args.style,
                            size=args.size, caption=caption, title=title, overall=overall)
        except ValueError as error:
            return _fail(f"{path}: no figure written: {error}")
    for warning in caught:  # ours become notes; any other warning is shown as it was raised
        if issubclass(warning.category, LeftOutOfFigure):
            print(f"note: {warning.message}")
        else:
            warnings.showwarning(warning.message, warning.category, warning.filename,
                                 warning.lineno)
    print(f"figure written to {path}")
    return 0


def _print_notes(lines: list[str]) -> None:
    for line in lines:
        print(line)


def _fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2
