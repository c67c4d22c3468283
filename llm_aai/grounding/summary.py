"""Read ``grounding.csv`` back and summarise it: the share of true claims per kind, with intervals.

The share is over the claims that could be checked (true or false); unverifiable ones are
counted beside it. The interval is Wilson's over claims (``llm_aai.analysis.stats``): claims of
one episode are not independent, so read it as a lower bound on the uncertainty.
"""

from __future__ import annotations

import csv
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from llm_aai.analysis.stats import format_interval, wilson_interval
from llm_aai.grounding.claims import KINDS
from llm_aai.grounding.ground import COLUMNS, EPISODE_COLUMNS, EPISODES_CSV, GROUNDING_CSV

FAILURES: tuple[str, ...] = ("perception", "numeric", "other")


class SummaryInputError(ValueError):
    """``grounding.csv`` is missing or malformed; the message names the file and line."""


@dataclass(frozen=True)
class KindShare:
    """Claims of one kind in one group."""

    kind: str
    true: int
    false: int
    unverifiable: int

    @property
    def checked(self) -> int:
        """Claims that could be checked: true or false."""
        return self.true + self.false

    def render(self) -> str:
        """``12/15 0.80 [0.55, 0.93] (+2 unverifiable)``."""
        if not self.checked:
            share = "-"
        else:
            share = (f"{self.true}/{self.checked} {self.true / self.checked:.2f} "
                     f"{format_interval(*wilson_interval(self.true, self.checked))}")
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


def shares(rows: Iterable[Mapping[str, str]]) -> list[KindShare]:
    """Per kind (in ``KINDS`` order, kinds with no claim left out)."""
    counts: dict[str, Counter] = defaultdict(Counter)
    for row in rows:
        counts[row["kind"]][row["verdict"]] += 1
    return [KindShare(kind, c["true"], c["false"], c["unverifiable"])
            for kind in (*KINDS, *sorted(set(counts) - set(KINDS))) if (c := counts.get(kind))]


def render_summary(claims: Sequence[Mapping[str, str]],
                   episodes: Sequence[Mapping[str, str]]) -> str:
    """The printed summary: claims per kind, then the failed episodes' classes."""
    lines = [f"{len(claims)} claims in {len(episodes)} episodes; share of checked claims "
             "that are true, 95% Wilson interval:"]
    lines += [f"  {share.kind:<18} {share.render()}" for share in shares(claims)]
    failed = [e for e in episodes if e["failure"] != "passed"]
    classes = Counter(e["failure"] for e in failed)
    lines.append(f"failed episodes: {len(failed)} of {len(episodes)}"
                 + ("" if not failed else ": " + ", ".join(
                     f"{name} {classes[name]}" for name in FAILURES if classes[name])))
    return "\n".join(lines)


def by_group(claims: Sequence[Mapping[str, str]], episodes: Sequence[Mapping[str, str]]
             ) -> list[dict[str, str]]:
    """One row per (agent, level, kind) and per (agent, level) failure class, for ``analyze``."""
    table = []
    groups: dict[tuple[str, int], list] = defaultdict(list)
    for row in claims:
        groups[(row["agent"], int(row["level"]))].append(row)
    failures: dict[tuple[str, int], Counter] = defaultdict(Counter)
    for row in episodes:
        failures[(row["agent"], int(row["level"]))][row["failure"]] += 1
    for key in sorted(set(groups) | set(failures)):
        agent, level = key
        for share in shares(groups.get(key, [])):
            table.append({"agent": agent, "level": str(level), "what": share.kind,
                          "value": share.render()})
        counts = failures.get(key, Counter())
        total = sum(counts.values())
        for name in ("passed", *FAILURES):
            if counts[name]:
                table.append({"agent": agent, "level": str(level), "what": f"episodes {name}",
                              "value": f"{counts[name]}/{total}"})
    return table
