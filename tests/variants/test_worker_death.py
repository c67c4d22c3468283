"""A worker process killed during ``variants make``: its task gets a crash row, the other
tasks' variants are made, and running the command again makes nothing more."""

from __future__ import annotations

from llm_aai.arena.catalog import select_tasks
from llm_aai.execution import WORKER_DIED
from llm_aai.variants import generate
from llm_aai.variants.generate import KEPT, TASK_CRASH, MakeSettings, make_variants
from llm_aai.variants.index import read_rows
from tests.variants import jobs

OTHER_TASK = "01-06-02"


def test_a_killed_worker_is_its_tasks_crash_row_and_the_others_are_made(testbed_dir, tmp_path,
                                                                        monkeypatch):
    monkeypatch.setattr(generate, "_task_job", jobs.task_or_death)
    tasks = select_tasks(tasks=f"{jobs.KILLER_TASK},{OTHER_TASK}", full=True)
    out = tmp_path / "variants"
    settings = MakeSettings(count=1, seed=5)
    make_variants(tasks, out, settings, arenas_dir=testbed_dir, workers=2)
    rows = read_rows(out)
    by_parent = {}
    for row in rows:
        by_parent.setdefault(row["parent"], []).append(row)
    assert set(by_parent) == {jobs.KILLER_TASK, OTHER_TASK}  # none lost
    [killed] = by_parent[jobs.KILLER_TASK]
    assert (killed["reason"], killed["detail"]) == (TASK_CRASH, WORKER_DIED)
    assert any(row["outcome"] == KEPT for row in by_parent[OTHER_TASK])
    assert not list(out.glob(f"{jobs.KILLER_TASK}-v*.yaml"))  # the dead worker left no variant
    # the crash is recorded, so making the same request again plays nothing
    monkeypatch.setattr(generate, "_task_job", _never)
    again = make_variants(tasks, out, settings, arenas_dir=testbed_dir, workers=2)
    assert all(outcome.resumed for outcome in again)
    assert read_rows(out) == rows


def _never(*args):
    raise AssertionError("a recorded task was made again")
