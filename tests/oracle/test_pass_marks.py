"""The competition's pass marks override the testbed files' where they differ."""

from __future__ import annotations

import subprocess
import sys

from llm_aai.arena.catalog import pass_mark_of, unity_records


def test_the_four_differing_tasks_use_the_competition_mark():
    for task in ("07-13-01", "07-13-02", "07-13-03"):
        mark = pass_mark_of(task, 4.0)
        assert (mark.value, mark.file_value, mark.source) == (1.0, 4.0, "competition")
        assert "instead of the arena file's 4" in mark.note
    assert pass_mark_of("10-22-02", 0.0).note is None  # no mark in the file reads as 0


def test_a_file_that_is_not_a_testbed_task_keeps_its_own_mark():
    mark = pass_mark_of("my-arena", 2.5)
    assert (mark.value, mark.source, mark.note) == (2.5, "file", None)
    assert pass_mark_of(None, 1.0).value == 1.0


def test_unity_records_cover_the_testbed():
    records = unity_records()
    assert len(records) == 900
    assert sum(r.passed_any > 0 for r in records.values()) == 736
    assert records["07-13-01"].pass_mark == 1.0


def test_arenas_show_says_when_the_mark_differs(testbed_dir):
    shown = subprocess.run([sys.executable, "-m", "llm_aai.arenas", "show", "07-13-01",
                            "--arenas-dir", str(testbed_dir)], capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr
    assert "pass_mark=1 " in shown.stdout
    assert "instead of the arena file's 4" in shown.stdout


def test_audit_diagnoses_name_testbed_tasks_passed_in_unity_with_a_known_class():
    from llm_aai.audit.report import diagnoses

    records = unity_records()
    notes = diagnoses()
    assert notes
    for task, note in notes.items():
        assert task in records and records[task].passed_any > 0, task
        assert note["class"] in ("simulator", "search", "build", "protocol"), task
        assert note["mechanism"].strip() and note["evidence"].strip(), task
