"""Realistic run directories written with the real log store, with known outcomes.

Every run covers the 40 children tasks x N trials. Whether an episode passes, breaks the script
grammar or is lost to infrastructure is decided by small rule functions, so tests can compute
the expected tables independently of the code under test.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from llm_aai.analysis import reference_populations
from llm_aai.logs import EpisodeResult, EpisodeWriter, RunStore, TurnRecord, Usage
from llm_aai.settings import ResolvedRun, RunConfig

Rule = Callable[[str, int, int], bool]  # (task_id, level, trial) -> bool


def children_tasks() -> list[tuple[str, int, float]]:
    """(task_id, level, pass_mark) of the 40 tasks, from the packaged reference table."""
    ref = reference_populations()
    rows = ref[(ref["population"] == "children") & (ref["scope"] == "task")]
    return [(str(t), int(lv), float(pm))
            for t, lv, pm in zip(rows["task_id"], rows["level"], rows["pass_mark"], strict=True)]


def never(task_id: str, level: int, trial: int) -> bool:
    return False


def _frame(value: int) -> np.ndarray:
    return np.full((16, 16, 3), value % 256, dtype=np.uint8)


def _write_episode(writer: EpisodeWriter, *, invalid: int, scripts: int, reward: float,
                   health: float, infra: bool) -> None:
    """Turns like the runner's: scripts (some invalid), then a closing turn unless infra."""
    images = [writer.save_frame(1, i, _frame(i)) for i in range(3)]
    for turn in range(1, scripts + 1):
        bad = turn <= invalid
        writer.write_turn(TurnRecord(
            turn=turn, sent_text=f"Health: {health}", sent_images=tuple(images),
            reply="I will walk forward." if bad else "Think(food ahead)\nGo(3)",
            commands=None if bad else ({"op": "Think", "arg": "food ahead"},
                                       {"op": "Go", "arg": 3}),
            parse_error="no command found" if bad else None,
            actions=((0, 0),) if bad else ((1, 0),) * 3, steps=1 if bad else 3,
            health=health, usage=Usage(input_tokens=900, output_tokens=40, cost_usd=0.001,
                                       latency_s=1.5),
        ))
        images = [writer.save_frame(turn + 1, 0, _frame(turn))]
    if not infra:
        writer.write_turn(TurnRecord(turn=scripts + 1, sent_text="Episode over.",
                                     sent_images=tuple(images), health=health, reward=reward,
                                     terminated=True))


def build_run(root: Path, *, model: str, prompt: str = "react", trials: range = range(1, 4),
             passes: Rule = never, invalid: Rule = never, infra: Rule = never,
             unfinished: tuple[tuple[str, int], ...] = (), run_id: str | None = None,
             levels: range = range(1, 11)) -> Path:
    """Write a run directory of the children tasks in ``levels``; returns its path."""
    run_id = run_id or f"run-{model}-{prompt}-{trials.start}"
    store = RunStore(root / run_id)
    tasks = [task for task in children_tasks() if task[1] in levels]
    run = ResolvedRun(RunConfig(model=model, prompt=prompt, trials=len(trials)),
                      tasks=tuple(t for t, _, _ in tasks))
    store.write_manifest({
        "schema_version": 1, "manifest_version": 3, "run_id": run_id, "run": run.to_record(),
        "agent": {"name": "llm", "litellm_model": f"provider/{model}"},
    })
    for task_id, level, pass_mark in tasks:
        for trial in trials:
            episode_id = f"{task_id}_t{trial}"
            if (task_id, trial) in unfinished:
                writer = store.start_episode(episode_id)
                _write_episode(writer, invalid=0, scripts=2, reward=0.0, health=100.0,
                               infra=True)
                writer.close()
                continue
            lost = infra(task_id, level, trial)
            if lost:  # a first attempt set aside, then the relaunch failed too
                writer = store.start_episode(episode_id)
                _write_episode(writer, invalid=0, scripts=1, reward=0.0, health=100.0,
                               infra=True)
                writer.close()
                store.keep_failed_attempt(episode_id, 1)
            passed = passes(task_id, level, trial) and not lost
            n_invalid = 2 if invalid(task_id, level, trial) else 0
            scripts = 1 if lost else 5
            reward = pass_mark + 0.5 if passed else pass_mark - 1.0
            health = 80.0 if passed else 0.0
            writer = store.start_episode(episode_id)
            _write_episode(writer, invalid=min(n_invalid, scripts), scripts=scripts,
                           reward=reward, health=health, infra=lost)
            writer.finish(EpisodeResult(
                episode_id=episode_id, task_id=task_id, level=level, trial=trial, seed=trial,
                agent="llm", passed=passed, reward=0.0 if lost else reward, pass_mark=pass_mark,
                final_health=100.0 if lost else health, scripts_used=scripts,
                invalid_replies=min(n_invalid, scripts),
                end_reason="infrastructure" if lost else ("goal" if passed else "health"),
                steps=3 * scripts, input_tokens=900 * scripts, output_tokens=40 * scripts,
                cost_usd=0.001 * scripts, attempts=2 if lost else 1,
                infra_error="provider unreachable after 6 retries" if lost else None,
            ))
    store.write_summary()
    return store.root


@pytest.fixture
def make_run():
    """The run-directory builder (``build_run``), for tests that need their own runs."""
    return build_run


# The two-model scenario most tests use -------------------------------------------------------

def alpha_passes(task_id: str, level: int, trial: int) -> bool:
    """Alpha passes every trial of levels 1-2 and trial 1 of every level-3 task."""
    return level <= 2 or (level == 3 and trial == 1)


def alpha_infra(task_id: str, level: int, trial: int) -> bool:
    """Two level-5 episodes are lost to the provider."""
    return (task_id, trial) in {("05-09-01", 2), ("05-24-01", 3)}


def beta_passes(task_id: str, level: int, trial: int) -> bool:
    """Beta passes only the first task of level 1 (01-04-03), every trial."""
    return task_id == "01-04-03"


def beta_invalid(task_id: str, level: int, trial: int) -> bool:
    """Beta breaks the script grammar twice in every level-4 episode."""
    return level == 4


@pytest.fixture(scope="session")
def two_models(tmp_path_factory) -> list[Path]:
    """Runs of 'alpha' and 'beta' on 40 tasks x 3 trials (alpha has an unfinished episode).

    Shared by many tests for speed: treat as read-only.
    """
    tmp_path = tmp_path_factory.mktemp("two_models")
    return [
        build_run(tmp_path, model="alpha", passes=alpha_passes, infra=alpha_infra,
                 unfinished=(("10-22-03", 3),)),
        build_run(tmp_path, model="beta", passes=beta_passes, invalid=beta_invalid),
    ]
