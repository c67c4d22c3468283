"""The audit report's text: counts in good English, and no internal notes from the data file."""

import csv
import re
from importlib import resources

from llm_aai.arena.catalog import unity_records
from llm_aai.audit.report import build_report, diagnoses
from llm_aai.audit.rows import AuditRow

INTERNAL = re.compile(r"\bw\d+-[a-z]+|\bbranch\b|\bhelper\b|issue #\d+|\bmain\b")
"""Developers' bookkeeping (worktrees, branches, helpers, issue numbers) that a reader of the
report cannot follow: the evidence cites commits, files, tests and measurements instead."""


def test_the_diagnoses_carry_no_internal_notes():
    text = resources.files("llm_aai").joinpath("data", "audit_diagnoses.csv").read_text(
        encoding="utf-8")
    found = [f"audit_diagnoses.csv:{line}: {row['task_id']} {field}: {match.group(0)!r}"
             for line, row in enumerate(csv.DictReader(text.splitlines()), start=2)
             for field in ("mechanism", "evidence")
             for match in INTERNAL.finditer(row[field])]
    assert found == []
    assert len(diagnoses()) == len(text.splitlines()) - 1


def _row(task_id, build, solved, reward):
    return AuditRow(task_id=task_id, level=int(task_id[:2]), seed=0, solved=solved,
                    reward=reward, pass_mark=0.5, end_reason="time_limit",
                    search_seconds=1.0, physics_build=build)


def test_one_task_played_in_the_other_build_is_one_task():
    passed = [t for t, r in unity_records().items() if r.passed_any][:2]
    rows = [_row(passed[0], "3.x", True, 1.0), _row(passed[1], "3.x", False, -1.0),
            _row(passed[1], "2019", True, 0.9)]
    text = build_report(rows, settings={"physics_build": "3.x", "budget": 100})
    assert "3 physics steps): 1 task." in text and "1 tasks" not in text
