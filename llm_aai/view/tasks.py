"""One testbed task across every model, run and trial: the task page's model.

The testbed files carry no prose, so the task is described by what its arena file fixes: the
level, time limit, pass mark and the objects it holds. The children's and the Olympics top
10's proportions passing the task come from the packaged reference table.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from llm_aai.analysis.levels import LEVEL_NAMES
from llm_aai.analysis.reference import reference_tasks
from llm_aai.view.layout import Layout
from llm_aai.view.svg import AgentPath

REFERENCE_POPULATIONS = ("children", "olympics_top10")


@dataclass(frozen=True)
class TaskView:
    """A task and its episodes (``EpisodeEntry`` rows of the site, ordered by model and trial).

    Attributes:
        task_id: ``LL-TT-VV``.
        level: the level number.
        entries: the task's episodes.
        layout: the arena as placed in the first episode with a drawable arena (paths of the
            others are overlaid on it; ``layout_note`` says when their placement differs).
        layout_note: what the overlay's reader must know about the arena under the paths.
        description: one line on the arena: level, time limit, pass mark, objects.
        reference: ``population -> proportion passing``; absent populations are left out.

    """

    task_id: str
    level: int
    entries: tuple
    layout: Layout | None
    layout_note: str
    description: str
    reference: dict[str, float]

    def paths(self, root: str) -> list[AgentPath]:
        """Every episode's path, labelled with model and trial and linked to its page."""
        return [AgentPath(entry.view.path.points, _label(entry), f"{root}{entry.href}")
                for entry in self.entries]

    def passed(self) -> dict[str, str]:
        """``label -> "k/n"`` passes per model on this task (infrastructure losses left out)."""
        counts: dict[str, list[int]] = {}
        for entry in self.entries:
            if entry.row["infra_failure"]:
                continue
            k_n = counts.setdefault(entry.row["label"], [0, 0])
            k_n[0] += bool(entry.row["passed"])
            k_n[1] += 1
        return {label: f"{k}/{n}" for label, (k, n) in counts.items()}


def task_views(entries) -> list[TaskView]:
    """Group the site's episodes by task, in task order."""
    reference = reference_tasks()
    by_task: dict[str, list] = {}
    for entry in entries:
        by_task.setdefault(entry.row["task_id"], []).append(entry)
    views = []
    for task_id in sorted(by_task):
        group = sorted(by_task[task_id], key=lambda e: (e.row["label"], e.row["run_id"],
                                                         e.row["trial"]))
        layout, note = _overlay_layout(group)
        rows = reference[reference["task_id"] == task_id]
        shares = {str(p): float(v) for p, v in zip(rows["population"], rows["proportion"],
                                                    strict=True) if p in REFERENCE_POPULATIONS}
        views.append(TaskView(task_id, int(group[0].row["level"]), tuple(group), layout, note,
                              _description(group), shares))
    return views


def _overlay_layout(group) -> tuple[Layout | None, str]:
    drawable = [entry for entry in group if entry.view.layout is not None]
    if not drawable:
        return None, group[0].view.layout_note or "arena not drawn"
    first = drawable[0]
    differ = [entry for entry in drawable[1:] if entry.view.layout != first.view.layout]
    note = f"objects as placed in {_label(first)}"
    if differ:
        note += (f"; {len(differ)} other episode(s) placed the arena's random objects "
                 "elsewhere (see their own maps)")
    return first.view.layout, note


def _description(group) -> str:
    entry = next((e for e in group if e.view.layout is not None), group[0])
    row = entry.row
    level = int(row["level"])
    text = f"Level {level} ({LEVEL_NAMES.get(level, '?')}); pass mark {row['pass_mark']:g}"
    layout = entry.view.layout
    if layout is not None:
        names = Counter(layout.objects)
        objects = ", ".join(f"{n} {name}" for name, n in sorted(names.items()))
        text += f"; time limit {_time_limit(group)}; objects: {objects}"
    return text


def _time_limit(group) -> str:
    """The time limit in agent steps, per physics build when the task's runs used several.

    The arena's ``t`` is in physics steps of a build-dependent unit (t = 250 is 417 agent
    steps in 3.x, 250 in 2019), so it is shown as a reference only, after the agent steps
    that every other count on the site (an episode's steps, the health curve) uses.
    """
    placed = [entry.view for entry in group if entry.view.layout is not None]
    t = placed[0].layout.time_limit
    if not t:
        return "none"
    limits = {view.physics_build: view.time_limit for view in placed}
    if len(limits) == 1:
        (build, steps), = limits.items()
        return f"{steps} agent steps (t = {t:g} in the arena file; {build} build)"
    per_build = ", ".join(f"{steps} in {build}" for build, steps in sorted(limits.items()))
    return f"agent steps: {per_build} (t = {t:g} in the arena file)"


def _label(entry) -> str:
    return f"{entry.row['label']} · {entry.row['run_id']} · trial {entry.row['trial']}"
