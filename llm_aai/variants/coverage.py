"""The coverage of a variants folder: how many tasks got their K variants, and why not.

The issue's target is at least K = 3 validated variants for at least 95 % of the testbed tasks
an Olympics entrant passed in Unity. ``coverage_markdown`` reads a folder ``make`` wrote (its
``variants.csv`` and ``variants-make.json``) and writes the report: the share over the
Unity-passed tasks asked for, per level, the rejections by reason (candidates and parents
apart), and each task short of K with the reason. A folder whose ``make`` has not finished
gives the report so far, marked partial, with the tasks still to make.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from llm_aai.arena.catalog import LEVEL_NAMES, unity_records
from llm_aai.sim.builds import PHYSICS_BUILDS
from llm_aai.variants.generate import PROGRESS_FILE, UNTRANSFORMABLE
from llm_aai.variants.index import KEPT, REJECTED, read_rows

GOAL_SHARE = 0.95
"""The issue's target share of Unity-passed tasks with K validated variants."""


def _level(task_id: str) -> int:
    return int(task_id[:2])


def coverage_markdown(folder: Path, command: str) -> str:
    """The coverage report of ``folder`` as Markdown.

    Args:
        folder: a folder ``python -m llm_aai.variants make`` wrote.
        command: the command that regenerates the report (printed at its top).

    Raises:
        VariantIndexError: the folder has no readable index.
        FileNotFoundError: the folder has no ``variants-make.json`` (made before resuming).
    """
    folder = Path(folder)
    rows = read_rows(folder)
    request = json.loads((folder / PROGRESS_FILE).read_text(encoding="utf-8"))["request"]
    count = request["count"]
    asked = sorted(request["tasks"])
    records = unity_records()
    passed = [t for t in asked if records.get(t) and records[t].passed_any]
    by_task: dict[str, list[dict]] = {}
    for row in rows:
        by_task.setdefault(row["parent"], []).append(row)
    done = [t for t in passed if t in by_task]
    kept = {t: sum(r["outcome"] == KEPT for r in by_task.get(t, [])) for t in asked}
    full = [t for t in done if kept[t] >= count]
    refused = {t: by_task[t][0] for t in done if by_task[t][0]["seed"] == ""}
    transformable = [t for t in done if not (t in refused
                                             and refused[t]["reason"] == UNTRANSFORMABLE)]
    finished = len(done) == len(passed)
    builds = {t: next((r["physics_build"] for r in by_task[t] if r["outcome"] == KEPT), "")
              for t in done}
    elsewhere = sorted(t for t in done if builds[t] not in ("", PHYSICS_BUILDS[0]))
    random_only = [t for t in done if t in refused and refused[t]["reason"] == UNTRANSFORMABLE]
    lines = ["# Procedural variants: coverage of the Unity-passed tasks", "",
             "Regenerate with:", "", "```", command, "```", ""]
    checks = request["validation"]
    builds_checked = ", ".join(checks.get("physics_builds", PHYSICS_BUILDS[:1]))
    lines += [f"Asked: {count} variants of each of {len(asked)} tasks ({len(passed)} passed in "
              f"Unity by an Olympics entrant), seed {request['seed']}, up to "
              f"{request['candidates']} candidates per task, generator version "
              f"{request['generator_version']}. Checks: {checks['seeds']} placement and oracle "
              f"seed(s), oracle budget {checks['budget']} steps, heuristic parity over "
              f"{checks['heuristic_seeds']} seeds (pass counts within "
              f"{checks['heuristic_tolerance']}), frames {checks['resolution']} px, builds "
              f"{builds_checked}.", ""]
    if not finished:
        lines += [f"**Partial:** {len(done)} of {len(passed)} Unity-passed tasks finished so "
                  "far; rerun the make command (it resumes) and then this one.", ""]
    share = len(full) / len(passed) if passed else 0.0
    lines += ["## Summary", "",
              "| measure | value |", "|---|---|",
              f"| Unity-passed tasks asked | {len(passed)} |",
              f"| finished | {len(done)} |",
              f"| with >= {count} validated variants | {len(full)} "
              f"({100 * share:.1f} % of {len(passed)}; goal >= {100 * GOAL_SHARE:.0f} %: "
              f"{'met' if share >= GOAL_SHARE else 'not met'}"
              f"{'' if finished else ' so far'}) |",
              f"| of the finished ones | {len(full)} / {len(done)} "
              f"({100 * len(full) / max(len(done), 1):.1f} %) |",
              f"| of the finished transformable ones | {len(full)} / {len(transformable)} "
              f"({100 * len(full) / max(len(transformable), 1):.1f} %) |",
              f"| variants kept | {sum(kept[t] for t in done)} |",
              f"| tasks whose variants were checked in another build than {PHYSICS_BUILDS[0]} "
              f"| {len(elsewhere)}{': ' + ', '.join(elsewhere) if elsewhere else ''} |", ""]
    if elsewhere:
        lines += [f"A parent is checked in the builds {builds_checked} in turn and its "
                  "variants in the first whose oracle solves it: the oracle solves the tasks "
                  f"above in the {', '.join(sorted({builds[t] for t in elsewhere}))} build, "
                  "not an earlier one (docs/testbed-audit.md: build-dependent), and their "
                  "variants were validated there.", ""]
    if random_only:
        lines += [f"Tasks whose every object is placed at random ({len(random_only)}) count "
                  "against the goal: no variant of them is made, as each episode of theirs "
                  "is a new instance already.", ""]
    lines += ["## Per level", "",
              f"| level | name | Unity-passed | finished | with >= {count} | share of finished |",
              "|---|---|---|---|---|---|"]
    for level in sorted({_level(t) for t in passed}):
        mine = [t for t in passed if _level(t) == level]
        ended = [t for t in mine if t in by_task]
        good = [t for t in ended if kept[t] >= count]
        lines.append(f"| {level} | {LEVEL_NAMES[level]} | {len(mine)} | {len(ended)} | "
                     f"{len(good)} | {100 * len(good) / max(len(ended), 1):.1f} % |")
    candidates = Counter(r["reason"] for t in done for r in by_task[t]
                         if r["outcome"] == REJECTED and r["seed"] != "")
    parents = Counter(refused[t]["reason"] for t in refused)
    lines += ["", "## Rejections by reason", "",
              "| rejected | reason | count |", "|---|---|---|"]
    lines += [f"| parent task | {reason} | {n} |" for reason, n in parents.most_common()]
    lines += [f"| candidate variant | {reason} | {n} |"
              for reason, n in candidates.most_common()]
    short = [t for t in done if kept[t] < count]
    lines += ["", f"## Tasks short of {count} ({len(short)})", "",
              "| task | kept | why |", "|---|---|---|"]
    for task in short:
        if task in refused:
            why = refused[task]["reason"]
            detail = refused[task]["detail"].split(";")[0].replace("|", "/")[:120]
            why += f": {detail}" if detail and refused[task]["reason"] != UNTRANSFORMABLE else ""
        else:
            tally = Counter(r["reason"] for r in by_task[task] if r["outcome"] == REJECTED)
            tried = len(by_task[task])
            why = (f"{tried} candidates tried; rejected: "
                   + ", ".join(f"{n} {reason}" for reason, n in tally.most_common()))
        lines.append(f"| {task} | {kept[task]} | {why} |")
    if not finished:
        todo = [t for t in passed if t not in by_task]
        lines += ["", f"## Not finished yet ({len(todo)})", "",
                  ", ".join(todo[:60]) + (" ..." if len(todo) > 60 else "")]
    return "\n".join(lines) + "\n"
