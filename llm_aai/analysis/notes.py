"""The notes under every ``analyze`` table: what its numbers leave out, mix or assume.

Every table (per level, task, mode, probe and variants, and the paired comparison) rests on
the same choices: infrastructure failures and context overflows excluded, runs pooled under a
label, copies counted once. Written once here, so no table prints its numbers without them.
"""

from __future__ import annotations

import json

import pandas as pd

from llm_aai.analysis.load import Runs, pooling_conflicts, repeated_seeds, setting_differences
from llm_aai.analysis.metrics import infra_failures
from llm_aai.analysis.paired import unpaired_tasks
from llm_aai.analysis.reference import Differing, partly_played, shared_tasks, tasks_by_label
from llm_aai.arena.catalog import children_subset
from llm_aai.logs.browser import continue_in_browser
from llm_aai.logs.schema import CONTEXT_OVERFLOW


def notes(runs: Runs, *, populations: bool = True) -> list[str]:
    """Every note on ``runs`` as labelled: ``pooling_notes``, then ``exclusion_notes``.

    Args:
        runs: the runs, labelled as the table's rows or cells are.
        populations: whether the table sets the children and the Olympics agents beside the
            runs; with them, ``reference_notes`` say where the two do not cover the same tasks
            (the variants table has no populations, and every variant is such a task).

    """
    return [*pooling_notes(runs), *(reference_notes(runs) if populations else ()),
            *exclusion_notes(runs)]


def comparison_notes(a: Runs, b: Runs) -> list[str]:
    """The notes under ``--compare`` of run A against run B (one run directory each).

    What A and B differ in (the arena files of a task both played above all: such a pair
    compares two arenas), the tasks one of them has no result on (left out of the pairs), and
    each run's exclusions, its episodes listed as A's or B's.
    """
    arenas, detail = setting_differences({side: json.loads(runs.runs["settings"].iloc[0])
                                          for side, runs in (("A", a), ("B", b))})
    lines = []
    if arenas:
        lines.append(f"note: A and B played {', '.join(arenas)} from arena files that differ "
                     "(their manifests' sha256): those pairs compare different arenas")
    if detail:
        lines.append(f"note: A and B differ in settings ({detail}); A - B measures these "
                     "differences together")
    only_a, only_b = unpaired_tasks(a.episodes, b.episodes)
    if only_a or only_b:
        lines.append("note: tasks with a result in one run alone are left out of the paired "
                     f"comparison: {_only(only_a, 'A')}; {_only(only_b, 'B')}")
    both = Runs(episodes=pd.concat([a.episodes.assign(label="A"), b.episodes.assign(label="B")],
                                   ignore_index=True),
                turns=a.turns, runs=pd.concat([a.runs, b.runs], ignore_index=True))
    return lines + exclusion_notes(both) + attempt_notes(a) + attempt_notes(b)


def _only(tasks: list[str], side: str, shown: int = 10) -> str:
    """``4 task(s) only in A (03-09-01, ...)``, the first ``shown`` named; ``none only in A``."""
    if not tasks:
        return f"none only in {side}"
    more = f", and {len(tasks) - shown} more" if len(tasks) > shown else ""
    return f"{len(tasks)} task(s) only in {side} ({', '.join(tasks[:shown])}{more})"


def pooling_notes(runs: Runs) -> list[str]:
    """What the labels mix: runs pooled across settings or seeds; a model run in modes."""
    lines = [f"note: {line}"
             for line in (*pooling_conflicts(runs.runs), *repeated_seeds(runs.episodes))]
    for model, modes in runs.runs.groupby("model")["mode"].unique().items():
        if len(modes) > 1:
            lines.append(f"note: {model} was run in {len(modes)} modes ({', '.join(modes)}); "
                         "each is shown apart, never pooled; compare them with --by mode")
    return lines


def dependence_notes(runs: Runs) -> list[str]:
    """One line per run whose episodes are not independent: ``--context across-tasks``.

    A run read from two directories (a copy) is named once.

    Every interval analyze gives takes episodes as independent draws: Wilson's trials, and
    the bootstrap's tasks, resampled one by one. In one conversation per trial an earlier
    task's outcome, told before the next task, can change how the next is played.
    """
    return [f"note: {row.run_id} played each trial's tasks in one conversation (--context "
            "across-tasks): its episodes are not independent (a task's outcome is told before "
            "the next), and the intervals, which take them as independent, may be too narrow"
            for row in runs.runs.drop_duplicates("run_id").itertuples(index=False)
            if row.across_tasks]


def exclusion_notes(runs: Runs) -> list[str]:
    """What the rates leave out or assume.

    Episodes that are not independent (``dependence_notes``), turns whose input was lost,
    episodes lost to infrastructure or ended by a context overflow, attempts whose logs
    could not be read (``attempt_notes``), copies, unfinished ones.
    """
    lines = dependence_notes(runs)
    for run in runs.runs.itertuples(index=False):
        if getattr(run, "lost_input_turns", 0):
            lines.append(f"note: {run.run_id}: in {run.lost_input_turns} turn(s) the server "
                         "counted far fewer prompt tokens than were sent (lost images or "
                         "system prompt; the manifest's warnings.lost_input): the model did not "
                         "see all its input")
    failures = infra_failures(runs.episodes)
    if len(failures):
        lines.append(f"\n{len(failures)} episode(s) lost to infrastructure (not counted as "
                     "failures):")
        lines += [f"  {row.label} {row.episode_id} after {row.attempts} attempt(s): "
                  f"{row.infra_error}" for row in failures.itertuples(index=False)]
    overflows = runs.episodes[runs.episodes["end_reason"] == CONTEXT_OVERFLOW]
    if len(overflows):
        lines.append(f"\n{len(overflows)} episode(s) ended by a context overflow (not counted): "
                     "the conversation outgrew the server's context window; give the server a "
                     "larger context or send fewer turns (--keep-last-turns)")
        lines += [f"  {row.label} {row.episode_id} after {row.scripts_used} reply(ies)"
                  for row in overflows.itertuples(index=False)]
    lines += attempt_notes(runs)
    for row in runs.runs.itertuples(index=False):
        if row.duplicates:
            lines.append(f"note: {row.path}: {row.duplicates} episode(s) of run {row.run_id} "
                         "already read from another directory, counted once")
        if row.unfinished:
            participant = getattr(row, "browser_participant", None)
            how = ("continue the run with --resume" if not isinstance(participant, str)
                   else continue_in_browser(row.path, participant, row.browser_interface))
            lines.append(f"note: {row.path}: {row.unfinished} unfinished episode(s) ignored "
                         f"({how})")
    return lines


def reference_notes(runs: Runs) -> list[str]:
    """Say where the reference rates (the children's 40 tasks) cover other tasks than the runs.

    A level played in part is compared over the tasks of it played
    (``reference.played_reference``): named, with its tasks. Where the labels played different
    tasks of a level, the populations are over those they share (``reference.shared_tasks``),
    and the labels whose rate is over other tasks are named. Tasks outside the 40 have no
    reference: the level's rate stays over its 4 tasks of the 40.
    """
    lines = []
    tasks, differing = shared_tasks(tasks_by_label(runs.episodes))
    partly = partly_played(tasks)
    if partly:
        levels = "; ".join(f"level {level}: {len(played)} of {of} ({', '.join(played)})"
                           for level, (played, of) in partly.items())
        lines.append("note: the runs played part of a level's tasks in the children's 40 "
                     f"({levels}): there the children's and Olympics agents' rates are over "
                     "the tasks played alone, from their per-task results, with no "
                     "interquartile range (marked 'N of 4 tasks')")
    lines += _differing_notes(differing)
    subset = {task.task_id for task in children_subset()}
    outside = sorted(set(runs.episodes["task_id"]) - subset)
    if outside:
        lines.append(f"note: {len(outside)} task(s) played are outside the 40-task children "
                     f"subset (e.g. {outside[0]}); the children's and Olympics agents' rates in "
                     "the table are over the 40 tasks, so compare per level with care")
    return lines


def _differing_notes(differing: Differing) -> list[str]:
    """One line per level whose labels played different tasks: whose rate is over which."""
    lines = []
    for level, (shared, others) in differing.items():
        theirs = "; ".join(f"{label}: {', '.join(tasks)}" for label, tasks in others.items())
        which = ("the tasks they share" if all(set(shared) <= set(tasks)
                                                for tasks in others.values())
                 else "every one played: they share none")
        lines.append(f"note: level {level}: the labels played different tasks of it; the "
                     f"children's and Olympics agents' rates are over {', '.join(shared)} "
                     f"({which}), so the rates of {', '.join(others)} there are over other "
                     f"tasks than the populations' ({theirs})")
    return lines


def attempt_notes(runs: Runs) -> list[str]:
    """One line per attempt set aside or unfinished whose logs could not be read.

    Such an attempt is no result, so it stops nothing; but what it spent is not known, and
    the cost shown counts it as unpriced (``load.Runs.attempts``).
    """
    unreadable = runs.attempts[runs.attempts["unreadable"].notna()]
    return [f"note: {row.attempt_dir}: the {row.kind} attempt's logs cannot be read "
            f"({row.unreadable}); its cost is unknown, counted as unpriced"
            for row in unreadable.itertuples(index=False)]
