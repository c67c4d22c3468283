"""Read ``grounding.csv`` back and summarise it: the share of true claims per kind, with intervals.

The share is over the claims that could be checked (true or false); unverifiable ones are
counted beside it. Two 95 % intervals go with it (``llm_aai.analysis.stats``): Wilson's over
claims, and a cluster bootstrap over tasks (``tasks[..]``: the tasks are resampled with all
their episodes' claims). Claims of one episode, and episodes of one task, share a scene and
a layout, so they are not independent: Wilson's interval is a lower bound on the uncertainty,
the one over tasks the interval to compare agents by.
"""

from __future__ import annotations

import csv
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from llm_aai.analysis.scored import scored
from llm_aai.analysis.stats import (
    DEFAULT_BOOTSTRAP,
    Bootstrap,
    cluster_bootstrap_interval,
    format_interval,
    wilson_interval,
)
from llm_aai.grounding.claims import KINDS
from llm_aai.grounding.ground import COLUMNS, EPISODE_COLUMNS, EPISODES_CSV, GROUNDING_CSV

FAILURES: tuple[str, ...] = ("perception", "numeric", "other")
ALL_LEVELS = 0
"""The level key of the rows over all of an agent's levels (printed ``all``)."""


class SummaryInputError(ValueError):
    """``grounding.csv`` is missing or malformed; the message names the file and line."""


@dataclass(frozen=True)
class KindShare:
    """Claims of one kind in one group.

    Attributes:
        kind: the claim kind.
        true: claims found true.
        false: claims found false.
        unverifiable: claims that could not be checked.
        tasks_low: the share's cluster-bootstrap interval over tasks, lower bound (NaN with
            checked claims from fewer than two tasks).
        tasks_high: its upper bound.
    """

    kind: str
    true: int
    false: int
    unverifiable: int
    tasks_low: float = float("nan")
    tasks_high: float = float("nan")

    @property
    def checked(self) -> int:
        """Claims that could be checked: true or false."""
        return self.true + self.false

    def render(self) -> str:
        """``12/15 0.80 [0.55, 0.93] tasks[0.40, 1.00] (+2 unverifiable)``."""
        if not self.checked:
            share = "-"
        else:
            share = (f"{self.true}/{self.checked} {self.true / self.checked:.2f} "
                     f"{format_interval(*wilson_interval(self.true, self.checked))} "
                     f"tasks{format_interval(self.tasks_low, self.tasks_high)}")
        return share + (f" (+{self.unverifiable} unverifiable)" if self.unverifiable else "")


def read_rows(path: Path, columns: Sequence[str]) -> list[dict[str, str]]:
    """The rows of a grounding CSV, checked for the columns it must have.

    Raises:
        SummaryInputError: no such file, or a column or verdict missing.
    """
    if not path.is_file():
        raise SummaryInputError(f"{path}: not found (run `python -m llm_aai.grounding RUN_DIR`)")
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in columns if c not in (reader.fieldnames or ())]
        if missing:
            raise SummaryInputError(f"{path}:1: missing column(s) {', '.join(missing)}")
        rows = list(reader)
    for number, row in enumerate(rows, start=2):
        if "verdict" in row and row["verdict"] not in ("true", "false", "unverifiable"):
            raise SummaryInputError(f"{path}:{number}: verdict {row['verdict']!r} is not "
                                    "true, false or unverifiable")
    return rows


def claim_rows(run_dir: Path) -> list[dict[str, str]]:
    """``RUN_DIR/grounding.csv``'s rows."""
    return read_rows(Path(run_dir) / GROUNDING_CSV, COLUMNS)


def episode_rows(run_dir: Path) -> list[dict[str, str]]:
    """``RUN_DIR/grounding_episodes.csv``'s rows."""
    return read_rows(Path(run_dir) / EPISODES_CSV, EPISODE_COLUMNS)


def counted_rows(rows: Iterable[Mapping[str, str]], run_dir: str | Path,
                 episodes: pd.DataFrame) -> list[dict[str, str]]:
    """The rows of ``run_dir``'s grounding CSVs whose episode the tables count, as labelled.

    ``analyze --by grounding`` keeps to the episodes and labels of every other table, so the
    notes under them hold for it too: an episode lost to infrastructure or ended by a context
    overflow is left out (``analysis.scored``), so is a copy counted from another directory,
    and ``agent`` becomes the episode's ``label`` (runs of one model in two modes or with two
    prompts stay apart).

    Args:
        rows: ``claim_rows(run_dir)`` or ``episode_rows(run_dir)``.
        run_dir: the run directory, as ``Runs.runs["path"]`` names it.
        episodes: ``Runs.episodes`` of the runs loaded with it.

    """
    mine = scored(episodes)
    mine = mine[mine["episode_dir"].map(lambda d: Path(d).parent.parent == Path(run_dir))
                .astype(bool)]
    labels = dict(zip(mine["episode_id"], mine["label"], strict=True))
    return [{**row, "agent": labels[row["episode"]]} for row in rows
            if row["episode"] in labels]


def shares(rows: Iterable[Mapping[str, str]],
           bootstrap: Bootstrap = DEFAULT_BOOTSTRAP) -> list[KindShare]:
    """Per kind (in ``KINDS`` order, kinds with no claim left out), with both intervals.

    Args:
        rows: ``grounding.csv``'s rows (``kind``, ``verdict``, ``task``).
        bootstrap: draws and seed of the interval over tasks.
    """
    counts: dict[str, Counter] = defaultdict(Counter)
    per_task: dict[str, dict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))
    for row in rows:
        counts[row["kind"]][row["verdict"]] += 1
        per_task[row["kind"]][row["task"]][row["verdict"]] += 1
    found = []
    for kind in (*KINDS, *sorted(set(counts) - set(KINDS))):
        if not (c := counts.get(kind)):
            continue
        tasks = per_task[kind].values()
        low, high = cluster_bootstrap_interval([t["true"] for t in tasks],
                                               [t["true"] + t["false"] for t in tasks],
                                               bootstrap)
        found.append(KindShare(kind, c["true"], c["false"], c["unverifiable"], low, high))
    return found


def render_summary(claims: Sequence[Mapping[str, str]],
                   episodes: Sequence[Mapping[str, str]],
                   bootstrap: Bootstrap = DEFAULT_BOOTSTRAP) -> str:
    """The printed summary: claims per kind, then the failed episodes' classes."""
    lines = [f"{len(claims)} claims in {len(episodes)} episodes; share of checked claims "
             "that are true, 95% Wilson interval over claims, tasks[cluster bootstrap 95% "
             "over tasks]:"]
    lines += [f"  {share.kind:<18} {share.render()}" for share in shares(claims, bootstrap)]
    failed = [e for e in episodes if e["failure"] != "passed"]
    classes = Counter(e["failure"] for e in failed)
    lines.append(f"failed episodes: {len(failed)} of {len(episodes)}"
                 + ("" if not failed else ": " + ", ".join(
                     f"{name} {classes[name]}" for name in FAILURES if classes[name])))
    return "\n".join(lines)


def by_group(claims: Sequence[Mapping[str, str]], episodes: Sequence[Mapping[str, str]],
             bootstrap: Bootstrap = DEFAULT_BOOTSTRAP) -> list[dict[str, str]]:
    """One row per (agent, level, kind) and per (agent, level) failure class, for ``analyze``.

    An agent seen on more than one level also gets rows over all its levels (level ``all``),
    the figures to compare agents by.
    """
    table = []
    groups: dict[tuple[str, int], list] = defaultdict(list)
    for row in claims:
        groups[(row["agent"], int(row["level"]))].append(row)
    failures: dict[tuple[str, int], Counter] = defaultdict(Counter)
    for row in episodes:
        failures[(row["agent"], int(row["level"]))][row["failure"]] += 1
    for agent in {agent for agent, _ in (*groups, *failures)}:
        if len({level for a, level in (*groups, *failures) if a == agent}) > 1:
            groups[(agent, ALL_LEVELS)] = [r for (a, _), rows in list(groups.items())
                                           if a == agent for r in rows]
            failures[(agent, ALL_LEVELS)] = sum((c for (a, _), c in list(failures.items())
                                                 if a == agent), Counter())
    for key in sorted(set(groups) | set(failures), key=lambda k: (k[0], k[1] or 99)):
        agent, level = key
        shown = str(level) if level != ALL_LEVELS else "all"
        for share in shares(groups.get(key, []), bootstrap):
            table.append({"agent": agent, "level": shown, "what": share.kind,
                          "value": share.render()})
        counts = failures.get(key, Counter())
        total = sum(counts.values())
        for name in ("passed", *FAILURES):
            if counts[name]:
                table.append({"agent": agent, "level": shown, "what": f"episodes {name}",
                              "value": f"{counts[name]}/{total}"})
    return table
