"""A worker process killed mid-audit: its episode is recorded as a crash and the audit goes on."""

from __future__ import annotations

from llm_aai.arena.catalog import select_tasks
from llm_aai.audit import run as audit_run
from llm_aai.audit.run import AuditSettings, read_rows, run_audit
from llm_aai.execution import WORKER_DIED
from tests.audit import jobs


def test_a_killed_worker_is_a_crash_row_and_the_other_tasks_are_played(testbed_dir, tmp_path,
                                                                        monkeypatch):
    monkeypatch.setattr(audit_run, "audit_episode", jobs.episode_or_death)
    tasks = select_tasks(tasks=f"{jobs.KILLER_TASK},01-04-03", full=True)
    out = tmp_path / "audit"
    rows = run_audit(tasks, 1, out, AuditSettings(budget=1500), arenas_dir=testbed_dir,
                     workers=2)
    by_task = {row.task_id: row for row in rows}
    assert set(by_task) == {jobs.KILLER_TASK, "01-04-03"}  # one row each, none lost
    killed = by_task[jobs.KILLER_TASK]
    assert killed.status == f"crash: {WORKER_DIED}" and not killed.solved
    assert by_task["01-04-03"].status == "ok" and by_task["01-04-03"].solved
    # the crash is recorded, so running the audit again plays nothing more
    monkeypatch.setattr(audit_run, "audit_episode", _never)
    assert run_audit(tasks, 1, out, AuditSettings(budget=1500), arenas_dir=testbed_dir,
                     workers=2) == read_rows(out) == rows


def _never(*args):
    raise AssertionError("a recorded episode was played again")
