"""``open_run``, the run library's door for a driver with its own scheduler (Inspect)."""

from __future__ import annotations

import shutil

import pytest
from filelock import FileLock

from llm_aai.agents import AgentSpec
from llm_aai.arena import ArenaError
from llm_aai.runner import RunConfig, app
from llm_aai.runner.app import open_run

TASK = "01-04-03"


def _no_factory(**_):
    raise AssertionError("the driver gives each episode its own agent")


@pytest.mark.parametrize("resume", [False, True], ids=["new run", "continued run"])
def test_a_run_that_fails_to_open_releases_its_lock(testbed_dir, tmp_path, monkeypatch,
                                                    resume):
    """An arena gone after the checks (the episodes are listed from it): the lock is free."""
    arenas = tmp_path / "arenas"
    arenas.mkdir()
    shutil.copy(testbed_dir / f"{TASK}.yaml", arenas)
    config = RunConfig(model="m", tasks=TASK, arenas_dir=arenas)
    agent = AgentSpec("m", "inspect", {}, _no_factory)
    run_dir = tmp_path / "run"
    if resume:
        open_run(config, run_dir, agent=agent).close()
    step = "_continue" if resume else "create_run"
    real = getattr(app, step)

    def then_the_arena_goes(*args):
        real(*args)
        (arenas / f"{TASK}.yaml").unlink()

    monkeypatch.setattr(app, step, then_the_arena_goes)
    with pytest.raises(ArenaError, match="cannot read file") as failed:
        open_run(config, run_dir, agent=agent, resume=resume)
    lock = FileLock(run_dir / ".lock", timeout=0)
    lock.acquire()  # the failed open's traceback (kept, as Inspect keeps it) holds no lock
    lock.release()
    assert f"{TASK}.yaml" in str(failed.value)
