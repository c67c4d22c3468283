"""Build-dependent tasks measured by the audit: unsolved tasks played again in the other build."""

from __future__ import annotations

import csv
import json

import pytest

from llm_aai.audit import AuditSettings
from tests.helpers.runs import audit_rows as rows
from tests.helpers.runs import run_module


def audit(*args):
    return run_module("llm_aai.audit", *args)


def test_a_bounce_task_solved_only_in_2019_is_reported_build_dependent(testbed_dir, tmp_path):
    """08-30-01 (the bounce ball stops in a death zone without the 2019 bounce material) is
    unsolved in the default 3.x build and solved when the audit plays it in 2019; 01-04-03,
    solved in 3.x, is not played again."""
    out = tmp_path / "audit"
    done = audit("--out", out, "--tasks", "08-30-01,01-04-03", "--arenas-dir", testbed_dir,
                 "--oracle-budget", "1500", "--no-progress")
    assert done.returncode == 0, done.stderr
    played = sorted((r["task_id"], r["physics_build"], r["solved"]) for r in rows(out))
    assert played == [("01-04-03", "3.x", "True"), ("08-30-01", "2019", "True"),
                      ("08-30-01", "3.x", "False")]
    assert json.loads((out / "audit.json").read_text())["physics_build"] == "3.x"
    report = (out / "audit.md").read_text()
    line = next(x for x in report.splitlines() if x.startswith("| 08-30-01 | 1 |"))
    assert "| solved (" in line and "build-dependent: solvable in the 2019 build" in line
    assert "Build-dependent (solved in the 2019 build, not in the 3.x): 1 (08-30-01)" in report
    assert "Solved in either build: 2 of 2 Unity-passed tasks (100.0 %)" in report
    assert "the 3.x build (Animal-AI 3.x/4.x, the build the LLM-AAI paper used" in report
    assert "| 08-30-01 | 54 % | no; 2019 build: solved (" in report  # a children task
    # the per-level table counts the audit's own build only
    assert "| all | | 2 / 736 | 1 | 50.0 % |" in report


def test_no_other_build_skips_the_second_pass(testbed_dir, tmp_path):
    out = tmp_path / "audit"
    done = audit("--out", out, "--tasks", "08-30-01", "--arenas-dir", testbed_dir,
                 "--oracle-budget", "300", "--no-other-build", "--no-progress")
    assert done.returncode == 0, done.stderr
    assert [r["physics_build"] for r in rows(out)] == ["3.x"]
    report = (out / "audit.md").read_text()
    assert "No task was played in the 2019 build" in report
    assert "| not played |" in report


def test_an_audit_in_the_2019_build_is_recorded_as_such(testbed_dir, tmp_path):
    out = tmp_path / "audit"
    done = audit("--out", out, "--tasks", "08-30-01", "--arenas-dir", testbed_dir,
                 "--oracle-budget", "1500", "--physics-build", "2019", "--no-progress")
    assert done.returncode == 0, done.stderr
    assert [(r["physics_build"], r["solved"]) for r in rows(out)] == [("2019", "True")]
    assert json.loads((out / "audit.json").read_text())["physics_build"] == "2019"
    assert "Physics: the 2019 build" in (out / "audit.md").read_text()
    # the same directory in the other build is another audit: refused, nothing lost
    again = audit("--out", out, "--tasks", "08-30-01", "--arenas-dir", testbed_dir,
                  "--oracle-budget", "1500", "--no-progress")
    assert again.returncode == 2 and "physics_build" in again.stderr
    assert len(rows(out)) == 1


def test_an_audit_from_before_the_build_column_resumes_without_loss(testbed_dir, tmp_path):
    out = tmp_path / "audit"
    args = ["--out", out, "--tasks", "01-04-03", "--arenas-dir", testbed_dir,
            "--oracle-budget", "1500", "--no-progress"]
    assert audit(*args).returncode == 0
    before = rows(out)
    # as an older audit wrote it: no physics_build column, no build in audit.json
    with (out / "audit.csv").open("w", newline="") as handle:
        names = [name for name in before[0] if name != "physics_build"]
        writer = csv.DictWriter(handle, fieldnames=names, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(before)
    settings = json.loads((out / "audit.json").read_text())
    del settings["physics_build"]
    (out / "audit.json").write_text(json.dumps(settings))
    again = audit(*args)
    assert again.returncode == 0, again.stderr
    assert rows(out) == before  # nothing replayed; the column filled with the 3.x it played


def test_an_unknown_build_is_refused():
    with pytest.raises(ValueError, match="physics_build must be one of 3.x, 2019"):
        AuditSettings(budget=10, physics_build="2020")
    bad = audit("--out", "nowhere", "--physics-build", "2020")
    assert bad.returncode == 2 and "invalid choice: '2020'" in bad.stderr
