"""One model across the probes: pass rate per level under image, text, both and plan.

The probes play the same arenas with different inputs (``--observation``, ``--prompt
plan``); a model's pass rate moving between them separates perception (image against
text) from planning (closed loop against one open-loop plan).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pandas as pd

from llm_aai.analysis.levels import LEVEL_NAMES
from llm_aai.analysis.load import PAPER, Runs
from llm_aai.analysis.metrics import pass_rates
from llm_aai.analysis.paired import task_of
from llm_aai.analysis.plan_reference import References
from llm_aai.analysis.reference import reference_levels
from llm_aai.analysis.scored import scored
from llm_aai.analysis.stats import DEFAULT_BOOTSTRAP, Bootstrap, format_clustered_rate
from llm_aai.arena.catalog import resolve_arena_path
from llm_aai.logs.store import read_manifest
from llm_aai.plans.evaluate import evaluate_plan_episode
from llm_aai.plans.metrics import aggregate
from llm_aai.settings import settings_of

PROBE_ORDER = ("image", "text", "text (allocentric)", "both", "both (allocentric)", "plan")


def _cell(group: pd.DataFrame, bootstrap: Bootstrap) -> str:
    agent = scored(group)
    return format_clustered_rate(agent["passed"], task_of(agent), bootstrap)


def _ordered(episodes: pd.DataFrame) -> list[str]:
    """The probes the runs hold, in ``PROBE_ORDER`` (others after them, by name)."""
    present = set(episodes["probe"])
    return [p for p in PROBE_ORDER if p in present] + sorted(present - set(PROBE_ORDER))


def probe_runs(runs: Runs) -> Runs:
    """``runs`` with each run and episode placed in the probe table: ``row`` and ``label``.

    ``row`` is the model, with the prompt where the model has several besides ``plan`` (the
    plan prompt is a probe, a column, not a row) and the mode where it is not the paper's, so
    runs the level table keeps apart stay apart here. ``label`` is ``row: probe``, one cell
    of the table and one bar of the figure: what the notes check for runs pooled across
    settings or seeds, and what they list lost episodes under.
    """
    rows = _row_names(runs.runs)

    def placed(frame: pd.DataFrame) -> pd.DataFrame:
        row = [rows[key] for key in zip(frame["model"], frame["prompt"], frame["mode"],
                                        strict=True)]
        return frame.assign(row=row, label=[f"{name}: {probe}" for name, probe
                                            in zip(row, frame["probe"], strict=True)])

    return replace(runs, episodes=placed(runs.episodes), runs=placed(runs.runs))


def _row_names(runs: pd.DataFrame) -> dict[tuple[str, str, str], str]:
    """``(model, prompt, mode) -> row``: the level table's labels, the plan prompt aside.

    A plan run joins its model's row when the model has one other prompt; with several it is
    a row of its own (``claude [plan]``), since it belongs to none of them.
    """
    prompts = runs[runs["probe"] != "plan"].groupby("model")["prompt"].nunique()
    names = {}
    for model, prompt, mode in zip(runs["model"], runs["prompt"], runs["mode"], strict=True):
        name = f"{model} [{prompt}]" if prompts.get(model, 0) > 1 else model
        names[(model, prompt, mode)] = name if mode == PAPER else f"{name} ({mode})"
    return names


def probe_table(episodes: pd.DataFrame, reference: pd.DataFrame | None = None,
                populations: tuple[str, ...] = (),
                bootstrap: Bootstrap = DEFAULT_BOOTSTRAP) -> pd.DataFrame:
    """Rows per ``row`` (``probe_runs``) and level, one column per probe the runs hold.

    A cell reads ``k/n p [Wilson] tasks[bootstrap]``: the Wilson interval over trials and the
    cluster bootstrap over tasks (``bootstrap``), the one that respects tasks.

    Infrastructure failures and context overflows are left out, as in every agent metric
    (``scored``). A probe a row was not run under shows ``-``. Each population of
    ``populations`` (``children``, ``olympics_top10``...) gets a column with its pooled pass
    rate on the level and its interquartile range, from ``reference``
    (``reference_populations()``). The row's name is in the ``model`` column.
    """
    probes = _ordered(episodes)
    levels = reference_levels(reference) if populations else None
    rows = []
    order = {name: i for i, name in enumerate(pd.unique(episodes["row"]))}
    ordered = episodes.assign(_row=episodes["row"].map(order))
    for (_, level), group in ordered.groupby(["_row", "level"], sort=True):
        row = {"model": group["row"].iloc[0], "level": int(level),
               "level_name": LEVEL_NAMES.get(int(level))}
        for probe in probes:
            row[probe] = _cell(group[group["probe"] == probe], bootstrap)
        for population in populations:
            row[population] = _population_cell(levels, population, int(level))
        rows.append(row)
    return pd.DataFrame(rows, columns=["model", "level", "level_name", *probes, *populations])


def _population_cell(levels: pd.DataFrame, population: str, level: int) -> str:
    """``p (IQR q1-q3)`` of a population on a level; ``-`` where it has no figure."""
    if not (levels["population"] == population).any():
        raise ValueError(f"no reference population {population!r}")
    found = levels[(levels["population"] == population) & (levels["level"] == level)]
    if found.empty:
        return "-"
    ref = found.iloc[0]
    if ref["q1"] != ref["q1"]:  # NaN: over the tasks played of a level played in part
        return f"{ref['proportion']:.2f} ({ref['tasks']} of {ref['level_tasks']} tasks)"
    return f"{ref['proportion']:.2f} (IQR {ref['q1']:.2f}-{ref['q3']:.2f})"


def probe_levels(episodes: pd.DataFrame,
                 bootstrap: Bootstrap = DEFAULT_BOOTSTRAP) -> pd.DataFrame:
    """``pass_rates`` per level with one label per row and probe (``claude: text``).

    What the comparison figure draws with ``plot_pass_rates``: each probe a bar with its
    Wilson interval and its interval over tasks, rows in the order loaded, probes in
    ``PROBE_ORDER``.
    """
    return pass_rates(probe_labelled(episodes), by="level", bootstrap=bootstrap)


def probe_labelled(episodes: pd.DataFrame) -> pd.DataFrame:
    """``probe_runs``' episodes ordered for the figure: rows as loaded, probes in order."""
    rank = {probe: i for i, probe in enumerate(_ordered(episodes))}
    order = {row: i for i, row in enumerate(pd.unique(episodes["row"]))}
    ordered = episodes.assign(_row=episodes["row"].map(order),
                              _probe=episodes["probe"].map(rank))
    return ordered.sort_values(["_row", "_probe"], kind="stable").drop(columns=["_row", "_probe"])


def plan_metrics_table(episodes: pd.DataFrame, arenas_dir: str | Path | None = None,
                       by: str = "level", references: References | None = None) -> pd.DataFrame:
    """The plan probe's metrics per row and level (or ``task_id``), each plan driven again.

    Similarity and path efficiency compare each plan with its episode's reference plan
    (same task and seed; ``llm_aai.analysis.plan_reference``); without ``references`` those
    columns are empty. Infrastructure failures are left out.

    Args:
        episodes: ``probe_runs(runs).episodes``; only the ``plan`` probe's are used.
        arenas_dir: where the testbed's arena files are; None: each run's own (its
            manifest), then ``$LLM_AAI_ARENAS`` or the download cache.
        by: ``level`` or ``task_id``.
        references: where the reference plans come from (the oracle's, or a run's).

    Raises:
        ValueError: a plan that, driven again, did not take the logged steps, or a reference
            that cannot be had for one of the episodes.
    """
    rows = episodes[(episodes["probe"] == "plan") & ~episodes["infra_failure"]]
    metrics: dict[str, list] = {}
    for run_dir, group in rows.groupby(rows["episode_dir"].map(lambda d: Path(d).parents[1])):
        manifest = read_manifest(run_dir)
        config = settings_of(manifest).config
        protocol = config.protocol  # as the episodes played it: a plan run's has one script
        where = arenas_dir if arenas_dir is not None else config.arenas_dir
        for row in group.itertuples():
            arena_path = resolve_arena_path(row.task_id, where)
            reference = None if references is None else references.plan_for(
                task_id=row.task_id, seed=int(row.seed), pass_mark=float(row.pass_mark),
                arena_path=arena_path, protocol=protocol)
            metrics.setdefault(row.row, []).append(evaluate_plan_episode(
                row.episode_dir, arena_path, protocol, reference=reference))
    if not metrics:
        return pd.DataFrame()
    table = pd.concat([aggregate(scored, by=by).reset_index().assign(model=model)
                       for model, scored in metrics.items()], ignore_index=True)
    return table[["model", *(column for column in table.columns if column != "model")]]
