"""The audit's report (``audit.md``): which Unity-passed tasks the oracle solves here, and why not.

A task counts as solved when the oracle passed it with at least one of its seeds (the
question is whether the simulator lets the task be solved at all). Every task passed in
Unity by at least one Olympics entrant and unsolved here is listed with its diagnosis from
``llm_aai/data/audit_diagnoses.csv`` (class ``simulator`` with the mechanism, ``search`` for
a search limit, ``build`` for a build-dependent task, ``protocol`` for a task the paper's
protocol rules out, e.g. by its no-op steps before the first script), or as not yet
diagnosed.

Whether a task is build-dependent is measured, not asserted: rows the audit played in the
other Animal-AI build (its second pass, ``llm_aai.audit.run``) say for each unsolved task
whether that build solves it, and a task it solves is reported as build-dependent whatever
the curated class says.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from importlib import resources
from pathlib import Path

from llm_aai.arena.catalog import LEVEL_NAMES, unity_records
from llm_aai.audit.rows import AuditRow
from llm_aai.logs.store import atomic_write_text
from llm_aai.sim.simulator import PHYSICS_BUILDS

REPORT_FILE = "audit.md"


def diagnoses() -> dict[str, dict[str, str]]:
    """The curated diagnoses of Unity-passed tasks the oracle does not solve, by task."""
    text = resources.files("llm_aai").joinpath("data", "audit_diagnoses.csv").read_text(
        encoding="utf-8")
    return {row["task_id"]: row for row in csv.DictReader(text.splitlines())}


def _tasks(count: int) -> str:
    return f"{count} task{'' if count == 1 else 's'}"


def build_report(rows: list[AuditRow], *, command: str = "", settings: dict | None = None,
                 revision: str = "", wall_seconds: float | None = None) -> str:
    """The report as Markdown (see the module doc)."""
    settings = settings or {}
    build = settings.get("physics_build") or PHYSICS_BUILDS[0]
    other = next(b for b in PHYSICS_BUILDS if b != build)
    by_task: dict[str, list[AuditRow]] = defaultdict(list)
    in_other: dict[str, list[AuditRow]] = defaultdict(list)
    for row in rows:
        mine = (row.physics_build or build) == build
        (by_task if mine else in_other)[row.task_id].append(row)
    rows = [row for task_rows in by_task.values() for row in task_rows]
    records = unity_records()
    notes = diagnoses()
    lines = ["# Testbed audit: the oracle against what was passed in Unity", ""]
    if command:
        lines += ["Regenerate with:", "", "```", command, "```", ""]
    mode = "oracle-frames" if settings.get("per_frame") else "oracle"
    lines.append(f"Agent: `{mode}`, search budget {settings.get('budget', '?')} simulated "
                 f"steps per episode. Tasks audited: {len(by_task)} of {len(records)}"
                 + (" (the whole testbed)." if len(by_task) == len(records) else
                    " (not the whole testbed)."))
    lines.append(f"Physics: the {build} build{_BUILD_NOTES.get(build, '')}. "
                 + (f"Unity-passed tasks unsolved in it were played again in the {other} "
                    f"build{_BUILD_NOTES.get(other, '')}: {_tasks(len(in_other))}."
                    if in_other else f"No task was played in the {other} build (the audit "
                    "ran with --no-other-build, or every Unity-passed task was solved)."))
    if revision:
        lines.append(f"Measured on {revision}.")
    lines.append("")
    solved = {task: any(r.solved for r in task_rows)
              for task, task_rows in by_task.items()}
    # per level: Unity-passed tasks audited and solved
    lines += ["## Tasks passed in Unity by at least one Olympics entrant", "",
              "| level | name | Unity-passed (audited / all) | oracle solves | share |",
              "|---|---|---|---|---|"]
    totals = [0, 0, 0]
    for level in range(1, 11):
        passed = [t for t, r in records.items() if int(t[:2]) == level and r.passed_any > 0]
        audited = [t for t in passed if t in by_task]
        ok = [t for t in audited if solved[t]]
        totals[0] += len(audited)
        totals[1] += len(passed)
        totals[2] += len(ok)
        share = f"{100 * len(ok) / len(audited):.1f} %" if audited else "-"
        lines.append(f"| {level} | {LEVEL_NAMES[level]} | {len(audited)} / {len(passed)} | "
                     f"{len(ok)} | {share} |")
    share = f"{100 * totals[2] / totals[0]:.1f} %" if totals[0] else "-"
    lines += [f"| all | | {totals[0]} / {totals[1]} | {totals[2]} | {share} |", ""]
    unsolved = sorted(t for t in by_task if not solved[t] and records.get(t)
                      and records[t].passed_any > 0)
    lines += ["## Unity-passed tasks the oracle does not solve here", ""]
    if not unsolved:
        lines += ["None.", ""]
    else:
        lines += ["| task | entrants passed (of 60) | best oracle reward / pass mark | end | "
                  f"{other} build | diagnosis | mechanism and evidence |",
                  "|---|---|---|---|---|---|---|"]
        dependent = []
        for task in unsolved:
            best = _best(by_task[task])
            note = notes.get(task)
            measured = _other_build_result(in_other.get(task, []))
            if measured.startswith("solved"):
                dependent.append(task)
                diagnosis = f"build-dependent: solvable in the {other} build"
            else:
                diagnosis = note["class"] if note else "not yet diagnosed"
            detail = f"{note['mechanism']} ({note['evidence']})" if note else ""
            end = best.end_reason or best.status
            lines.append(f"| {task} | {records[task].passed_any} | {_cell(best.reward)} / "
                         f"{_cell(best.pass_mark)} | {end} | {measured} | {diagnosis} | "
                         f"{detail} |")
        lines.append("")
        either = totals[2] + len(dependent)
        lines += [f"Build-dependent (solved in the {other} build, not in the {build}): "
                  f"{len(dependent)}" + (f" ({', '.join(dependent)})" if dependent else "")
                  + f". Solved in either build: {either} of {totals[0]} Unity-passed tasks"
                  + (f" ({100 * either / totals[0]:.1f} %)." if totals[0] else "."), ""]
    children = sorted(t for t in by_task if by_task[t][0].children_rate is not None)
    if children:
        lines += ["## The 40 children tasks", "",
                  "| task | children pass rate | oracle solves | oracle reward | pass mark |",
                  "|---|---|---|---|---|"]
        elsewhere = []
        for task in children:
            best = _best(by_task[task])
            rate = by_task[task][0].children_rate
            verdict = "yes" if solved[task] else "no"
            if not solved[task] and _other_build_result(in_other.get(task, [])) != "not played":
                verdict += f"; {other} build: {_other_build_result(in_other[task])}"
                if any(r.solved for r in in_other[task]):
                    elsewhere.append(task)
            lines.append(f"| {task} | {100 * rate:.0f} % | {verdict} |"
                         f" {_cell(best.reward)} | {_cell(best.pass_mark)} |")
        lines += ["", f"Oracle solves {sum(solved[t] for t in children)} of {len(children)}"
                  + (f"; {len(elsewhere)} more in the {other} build ({', '.join(elsewhere)})."
                     if elsewhere else "."), ""]
    crashes = [r for r in rows if not r.ok]
    lines += ["## Crashes", ""]
    lines += ([f"- {r.task_id} seed {r.seed}: {r.status}" for r in crashes]
              or ["None."])
    never = [t for t in by_task if records.get(t) and records[t].passed_any == 0]
    lines += ["", "## Other figures", "",
              f"- Tasks no entrant passed in Unity: {len(never)} audited, "
              f"{sum(solved[t] for t in never)} solved by the oracle here.",
              ]
    cpu = [r.search_seconds for r in rows if r.search_seconds is not None]
    if cpu:
        lines.append(f"- CPU time per episode: mean {sum(cpu) / len(cpu):.1f} s, max "
                     f"{max(cpu):.1f} s, total {sum(cpu) / 60:.1f} min over {len(cpu)} "
                     "episodes.")
    if wall_seconds is not None:
        lines.append(f"- Wall time of the last invocation: {wall_seconds / 60:.1f} min.")
    return "\n".join(lines) + "\n"


_BUILD_NOTES = {
    "3.x": " (Animal-AI 3.x/4.x, the build the LLM-AAI paper used: 3.1.3; bounce balls have "
           "no bounce material)",
    "2019": " (the Animal-AI Olympics build the entrants played: bounce balls of bounciness "
            "0.8, zones that end at the floor, no health, t in units of 3 physics steps)",
}
"""What sets each build apart, for the report's header (docs/animal-ai-facts.md, Bounce per
build; §3, Per build)."""


def _other_build_result(task_rows: list[AuditRow]) -> str:
    """The other build's verdict on a task: solved (best reward), unsolved, or not played."""
    if not task_rows:
        return "not played"
    best = _best(task_rows)
    if any(r.solved for r in task_rows):
        return f"solved ({_cell(best.reward)})"
    return f"unsolved ({_cell(best.reward) if best.ok else best.status[:60]})"


def _best(task_rows: list[AuditRow]) -> AuditRow:
    """The row of the highest reward (a crash, with none, counts lowest; the first on ties)."""
    return max(task_rows, key=lambda r: float("-inf") if r.reward is None else r.reward)


def _cell(value: float | None) -> str:
    """A number as the report shows it: as recorded, or ``-`` for none."""
    return "-" if value is None else str(value)


def write_report(out: Path, rows: list[AuditRow], **kwargs) -> Path:
    """Write ``audit.md`` into ``out`` and return its path.

    Written whole or not at all, so an audit interrupted while reporting never leaves half a
    report beside its rows.
    """
    path = Path(out) / REPORT_FILE
    atomic_write_text(path, build_report(rows, **kwargs))
    return path
