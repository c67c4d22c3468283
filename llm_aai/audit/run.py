"""Run the oracle over tasks x seeds in worker processes, appending rows as they finish.

Each row is one episode: the oracle under the paper's protocol (``llm_aai.oracle.play``) in
the world a ``run`` episode with the same seed would see (episode seed ``episode_seed(0,
task, seed)``, then the env's own world seed), held to the competition's pass mark. A task
whose search raises (e.g. the physics diverges) is recorded with status ``crash: ...``; an
episode that kills its worker process is recorded the same way (the executor,
``llm_aai.execution``, replays it alone once to be sure): nothing stops the audit. Rows
(``llm_aai.audit.rows.AuditRow``) are appended and flushed one by one, so an interrupted
audit loses only the episodes in flight, and ``run_audit`` on the same directory skips every
recorded one.

Build-dependent tasks are measured, not asserted: with ``other_build`` set, once the audit's
own build is done, every task passed in Unity and unsolved in it is played again in the
other Animal-AI build (``llm_aai.sim.simulator.PHYSICS_BUILDS``: the bounce balls of the 2019
Olympics build carry a material of bounciness 0.8, the 3.x prefabs none; its zones and
health differ too, ``llm_aai.sim.builds``). Those rows land in
the same ``audit.csv`` with their ``physics_build``; the report says, from them, which
unsolved tasks the other build makes solvable.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

from llm_aai.analysis.reference import reference_populations
from llm_aai.arena import load_config
from llm_aai.arena.catalog import Task, pass_mark_of, resolve_arena_path, unity_records
from llm_aai.arena.placement import place_arena
from llm_aai.audit.rows import COLUMNS, AuditRow
from llm_aai.env.animalai_env import world_seed
from llm_aai.execution import Executor, Job, Outcome, make_executor
from llm_aai.oracle import SearchSettings, play_oracle_episode
from llm_aai.runner.suite import episode_seed
from llm_aai.sim.simulator import PHYSICS_BUILDS

SETTINGS_FILE = "audit.json"
CSV_FILE = "audit.csv"


class AuditSettingsMismatch(ValueError):
    """An audit directory was started with other settings than the ones given now."""


@dataclass(frozen=True)
class AuditSettings:
    """What decides an audit's rows (recorded in ``audit.json``; a resume must match).

    Attributes:
        budget: the oracle's search budget per episode (simulated AAI steps).
        per_frame: the ``oracle-frames`` ceiling instead of the script protocol.
        physics_build: the Animal-AI build whose physics the audit plays (the first of
            ``PHYSICS_BUILDS``, 3.x, by default: the build the LLM-AAI paper used).
    """

    budget: int
    per_frame: bool = False
    physics_build: str = PHYSICS_BUILDS[0]

    def __post_init__(self) -> None:
        """Refuse a build the simulator does not know, before anything runs."""
        if self.physics_build not in PHYSICS_BUILDS:
            raise ValueError(f"physics_build must be one of {', '.join(PHYSICS_BUILDS)}, "
                             f"got {self.physics_build!r}")

    @property
    def other_build(self) -> str:
        """The build the second pass measures unsolved tasks in."""
        return next(b for b in PHYSICS_BUILDS if b != self.physics_build)

    @property
    def mode(self) -> str:
        """``oracle-frames`` or ``oracle``."""
        return "oracle-frames" if self.per_frame else "oracle"


def audit_episode(task_id: str, level: int, seed: int, arena_path: str,
                  settings: AuditSettings) -> AuditRow:
    """One audit row (runs in a worker process); never raises for a task's own failure."""
    import numpy as np


    row = _task_row(task_id, level, seed, settings)
    started = time.process_time()
    try:
        arena = load_config(arena_path).arena()
        mark = pass_mark_of(task_id, arena.pass_mark)
        row = dataclasses.replace(row, pass_mark=mark.value, file_pass_mark=mark.file_value)
        world = world_seed(episode_seed(0, task_id, seed))
        placed = place_arena(arena, np.random.default_rng(world), source=arena_path)
        episode = play_oracle_episode(placed, SearchSettings(
            budget=settings.budget, per_frame=settings.per_frame, seed=seed,
            pass_mark=mark.value), physics_build=settings.physics_build)
    except Exception as error:  # recorded, never fatal: see the module doc
        return dataclasses.replace(row, status=_crash_status(
            f"{type(error).__name__}: {error}"), search_seconds=round(
            time.process_time() - started, 3))
    return dataclasses.replace(
        row, solved=episode.passed, reward=episode.reward, steps=episode.steps,
        scripts=episode.scripts, searched=episode.searched,
        search_seconds=episode.search_seconds, end_reason=episode.end_reason)


def _task_row(task_id: str, level: int, seed: int, settings: AuditSettings) -> AuditRow:
    """A row with what is known of the task before it is played (not solved, no reward)."""
    record = unity_records().get(task_id)
    return AuditRow(task_id=task_id, level=level, seed=seed, solved=False,
                    unity_passed=record.passed_any if record else None,
                    unity_entrants=record.entrants if record else None,
                    unity_top10=record.top10_passed if record else None,
                    children_rate=_children_rates().get(task_id),
                    physics_build=settings.physics_build)


def _crash_status(why: str) -> str:
    return f"crash: {why}".replace("\n", " ")[:300]


def _children_rates() -> dict[str, float]:
    import pandas as pd


    frame = reference_populations()
    frame = frame[(frame["population"] == "children") & (frame["scope"] == "task")]
    return {str(t): round(float(p), 4) for t, p in zip(frame["task_id"], frame["proportion"],
                                                     strict=True) if not pd.isna(p)}


def read_rows(out: Path) -> list[AuditRow]:
    """The rows of ``out/audit.csv`` (empty if there is none yet).

    A row written before audits recorded their build gets the build of its directory
    (``audit.json``; 3.x, the only one then).

    Raises:
        AuditRowError: a cell that does not read as its column's type.
    """
    path = Path(out) / CSV_FILE
    if not path.exists():
        return []
    with path.open(encoding="utf-8", newline="") as handle:
        rows = [AuditRow.from_csv(cells, f"{path}:{line}")
                for line, cells in enumerate(csv.DictReader(handle), start=2)]
    if rows and not rows[0].physics_build:
        recorded = recorded_audit(out)
        build = recorded[0].physics_build if recorded else PHYSICS_BUILDS[0]
        rows = [row if row.physics_build else dataclasses.replace(row, physics_build=build)
                for row in rows]
    return rows


def _upgrade_csv(out: Path) -> None:
    """Rewrite an ``audit.csv`` written with fewer columns under today's (values kept)."""
    path = out / CSV_FILE
    if not path.exists() or path.stat().st_size == 0:
        return
    with path.open(encoding="utf-8", newline="") as handle:
        header = next(csv.reader(handle), [])
    if tuple(header) == COLUMNS:
        return
    unknown = [name for name in header if name not in COLUMNS]
    if unknown:
        raise AuditSettingsMismatch(f"{path}: unknown columns {', '.join(unknown)}; it was not "
                                    "written by this version's audit: use another --out")
    rows = read_rows(out)
    spare = path.with_suffix(".csv.tmp")
    with spare.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(row.to_csv() for row in rows)
    spare.replace(path)


def _check_settings(out: Path, settings: AuditSettings, command: str, revision: str) -> None:
    path = out / SETTINGS_FILE
    defaults = asdict(AuditSettings(budget=settings.budget))
    if path.exists():
        recorded = json.loads(path.read_text(encoding="utf-8"))
        # a setting added since the audit was started has its default (what it then played)
        recorded = {key: recorded.get(key, defaults[key]) for key in asdict(settings)}
        if recorded != asdict(settings):
            raise AuditSettingsMismatch(
                f"{out} holds an audit with settings {recorded}, not {asdict(settings)}: use "
                "another --out directory or the recorded settings")
    else:
        path.write_text(json.dumps({**asdict(settings), "command": command,
                                    "revision": revision}) + "\n", encoding="utf-8")


def recorded_audit(out: Path) -> tuple[AuditSettings, str, str] | None:
    """(settings, command, source revision) an audit directory was started with, or None."""
    path = Path(out) / SETTINGS_FILE
    if not path.exists():
        return None
    recorded = json.loads(path.read_text(encoding="utf-8"))
    command = recorded.pop("command", "")
    revision = recorded.pop("revision", "")
    return AuditSettings(**recorded), command, revision


def unsolved_in_unity_passed(rows: Iterable[AuditRow], build: str) -> list[str]:
    """Tasks passed in Unity by an entrant whose every episode in ``build`` failed, sorted."""
    records = unity_records()
    solved: dict[str, bool] = {}
    for row in rows:
        if row.physics_build != build:
            continue
        solved[row.task_id] = solved.get(row.task_id, False) or row.solved
    return sorted(task for task, ok in solved.items()
                  if not ok and records.get(task) and records[task].passed_any > 0)


def run_audit(tasks: Iterable[Task], seeds: int, out: Path, settings: AuditSettings, *,
              arenas_dir: str | Path | None = None, workers: int = 1,
              progress: Callable[[int, int], None] | None = None,
              on_row: Callable[[AuditRow], None] | None = None, command: str = "",
              revision: str = "", other_build: bool = False, executor: str = "local",
              address: str | None = None) -> list[AuditRow]:
    """Audit ``tasks`` x seeds 1..``seeds`` into ``out`` (resuming what is there).

    Args:
        tasks: the tasks to play.
        seeds: episodes per task (seeds 1..seeds, as ``run``'s trials).
        out: the audit directory (created).
        settings: budget, mode and build; must match the directory's if it holds an audit.
        arenas_dir: where the arena files are (as ``run --arenas-dir``).
        workers: jobs at once (worker processes, or the CPUs of a Ray started here).
        progress: called with (done, total) after each episode, for a progress bar.
        on_row: called with each new row.
        command: the command line, recorded with the settings for the report.
        revision: the source revision playing it, recorded likewise.
        other_build: then play every Unity-passed task left unsolved in the other build
            (``AuditSettings.other_build``), same seeds (see the module doc).
        executor: ``local`` (worker processes here) or ``ray`` (Ray tasks on a cluster,
            ``llm_aai.execution.EXECUTORS``); rows are written here, by this process alone.
        address: the Ray cluster to join (``ray`` only; None starts Ray on this machine).

    Returns:
        Every row of the audit directory (earlier and new).

    Raises:
        ArenaNotFoundError: a task's arena file is missing (checked before anything runs).
        AuditSettingsMismatch: ``out`` holds an audit with other settings.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    tasks = list(tasks)
    # absolute: a job reads its arena in a worker whose folder need not be this one (a Ray
    # worker's is its node's, on another machine over ray://)
    paths = {task.task_id: str(resolve_arena_path(task.task_id, arenas_dir).absolute())
             for task in tasks}
    _check_settings(out, settings, command, revision)
    _upgrade_csv(out)
    done = {(row.task_id, row.seed, row.physics_build) for row in read_rows(out)}

    def missing(chosen: list[Task], build: str) -> list[tuple[Task, int]]:
        return [(task, seed) for task in chosen for seed in range(1, seeds + 1)
                if (task.task_id, seed, build) not in done]

    todo = missing(tasks, settings.physics_build)
    total, finished = len(tasks) * seeds, len(tasks) * seeds - len(todo)
    if progress:
        progress(finished, total)
    path = out / CSV_FILE
    fresh = not path.exists() or path.stat().st_size == 0
    with path.open("a", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        if fresh:
            writer.writeheader()
            handle.flush()

        def record(row: AuditRow) -> None:
            nonlocal finished
            writer.writerow(row.to_csv())
            handle.flush()
            finished += 1
            if on_row:
                on_row(row)
            if progress:
                progress(finished, total)

        with make_executor(executor, workers, address) as pool:
            _play_all(pool, todo, paths, settings, record)
            if other_build:
                wanted = set(unsolved_in_unity_passed(read_rows(out), settings.physics_build))
                again = [task for task in tasks if task.task_id in wanted]
                other = dataclasses.replace(settings, physics_build=settings.other_build)
                todo = missing(again, other.physics_build)
                total += len(again) * seeds
                finished += len(again) * seeds - len(todo)
                if progress:
                    progress(finished, total)
                _play_all(pool, todo, paths, other, record)
    return read_rows(out)


def _play_all(executor: Executor, queue: Iterable[tuple[Task, int]], paths: dict[str, str],
              settings: AuditSettings, record: Callable[[AuditRow], None]) -> None:
    """Play ``queue`` in ``settings`` on ``executor``, recording each row as it finishes."""
    jobs = [Job((task, seed), audit_episode,
                (task.task_id, task.level, seed, paths[task.task_id], settings))
            for task, seed in queue]
    for outcome in executor.run(jobs):
        record(_row_of(outcome, settings))


def _row_of(outcome: Outcome, settings: AuditSettings) -> AuditRow:
    """The job's row; a job with no row (its worker died) becomes a crash row."""
    if not outcome.crashed:
        return dataclasses.replace(outcome.result, node_id=outcome.node_id, host=outcome.host)
    task, seed = outcome.job.key
    return dataclasses.replace(_task_row(task.task_id, task.level, seed, settings),
                               status=_crash_status(outcome.crash))
