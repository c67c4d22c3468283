"""Make K validated variants of testbed tasks into a folder (``python -m llm_aai.variants make``).

For each task: the parent is checked first (placed, solved by the oracle, the heuristic
agent's passes recorded); then candidates are drawn, written, validated
(``llm_aai.variants.validation``) and kept as ``<task>-v<k>.yaml`` until K are kept or the
task's candidate allowance is spent. Each candidate composes one symmetry of the square (the
8 rotations and reflections, taken in a shuffled order so the first ones differ) with
optional swap, translation, jitter and recolouring (``llm_aai.variants.transforms``). Every
candidate, kept or rejected, is a row of ``variants.csv``; a transformation that did not apply
to a task is counted in the summary with its reason.

Randomness: one ``random.Random`` per task, seeded from the run's seed and the task id, so a
task's variants do not depend on the other tasks or on the worker that made them.

Resuming: the index is rewritten whole (atomically) each time a task finishes, its rows in the
order of the task list, and ``variants-make.json`` records what was asked (the tasks with
their files' sha256, K, the seed, the validation settings, ``GENERATOR_VERSION``). A rerun of
the same request into the same folder keeps the finished tasks and makes only the rest; as a
task's variants depend only on the seed and the task, the folder ends as an uninterrupted run
leaves it, byte for byte. A different request into that folder is refused, naming what
differs, and nothing in it is touched.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import random
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from llm_aai.arena import ArenaError, Task, dump_config, load_config, resolve_arena_path
from llm_aai.arena.catalog import pass_mark_of
from llm_aai.arena.model import Arena, ArenaConfig
from llm_aai.execution import Job, Outcome, make_executor
from llm_aai.variants import transforms
from llm_aai.variants.index import INDEX_FILE, KEPT, REJECTED, read_rows, write_rows
from llm_aai.variants.validation import (
    CRASH,
    INVALID,
    Rejected,
    ValidationSettings,
    Validator,
    Verdict,
    passes_text,
)

GENERATOR_VERSION = 3
"""Bumped whenever the same request would make other variants (a transformation, the
candidate order or a check changed): a folder or a cache made by another version is not
resumed or reused. 2: the heuristic parity check counts passes over several seeds. 3: a
parent is measured in the first build whose oracle solves it, its variants in that build."""
PROGRESS_FILE = "variants-make.json"
"""What a ``make`` folder was made for (``request``) and the transformations that did not
apply to each finished task: what a rerun checks before it resumes."""
MAX_COUNT = 20
"""Most variants asked of one task: beyond the 8 symmetries of the square the rest differ only
by jitter, translation and colour, and a larger K mostly buys near-copies."""
UNTRANSFORMABLE = "layout cannot be transformed"
PARENT_CRASH = "the simulator failed on the parent"
TRANSFORM_CRASH = "a transformation failed"
TASK_CRASH = "the task's worker failed"


class VariantRequestError(ValueError):
    """A request that cannot be met (K out of range, a task whose layout cannot change)."""


@dataclass(frozen=True)
class MakeSettings:
    """What ``make`` produces.

    Attributes:
        count: variants to keep per task (1..``MAX_COUNT``).
        seed: the generation seed.
        validation: how each variant is checked.
        candidates: candidates tried per task before giving up (default ``4 * count + 8``).
    """

    count: int
    seed: int = 0
    validation: ValidationSettings = field(default_factory=ValidationSettings)
    candidates: int | None = None

    def __post_init__(self) -> None:
        if not 1 <= self.count <= MAX_COUNT:
            raise VariantRequestError(f"--count {self.count}: give 1 to {MAX_COUNT} variants "
                                      "per task")
        if self.candidates is not None and self.candidates < self.count:
            raise VariantRequestError(f"--candidates {self.candidates} is fewer than --count "
                                      f"{self.count}")

    @property
    def allowance(self) -> int:
        """Candidates tried per task."""
        return self.candidates if self.candidates is not None else 4 * self.count + 8


@dataclass
class TaskOutcome:
    """What ``make`` did for one task.

    Attributes:
        task_id: the parent task.
        kept: variant ids kept.
        rows: its rows of ``variants.csv`` (kept and rejected).
        not_applied: transformations that did not apply, by reason.
        resumed: finished by an earlier, interrupted ``make`` into the same folder.
    """

    task_id: str
    kept: list[str] = field(default_factory=list)
    rows: list[dict] = field(default_factory=list)
    not_applied: Counter = field(default_factory=Counter)
    resumed: bool = False

    @property
    def rejections(self) -> Counter:
        """Rejected candidates (and a rejected parent), by reason."""
        return Counter(row["reason"] for row in self.rows if row["outcome"] == REJECTED)


def task_rng(seed: int, task_id: str) -> random.Random:
    """The task's own generator (independent of the other tasks and of the workers)."""
    digest = hashlib.sha256(f"variants:{seed}:{task_id}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "little"))


SYMMETRIES = tuple((turns, mirrored) for mirrored in (False, True) for turns in range(4))
"""The 8 symmetries of the square: quarter turns, each with or without the mirror."""


def draw_candidate(arena: Arena, rng: random.Random, symmetry: tuple[int, bool],
                   not_applied: Counter) -> tuple[Arena, list[str]]:
    """One candidate: a symmetry of the square and, each with odds 1/2, the optional steps.

    A step that cannot apply is left out and counted in ``not_applied`` by its reason.
    """
    steps: list[str] = []
    if rng.random() < 0.5:
        arena = _optional(arena, "swap", transforms.swap_sides, steps, not_applied)
    turns, mirrored = symmetry
    if turns:
        arena = transforms.rotate(arena, turns)
        steps.append(f"rotate{90 * turns}")
    if mirrored:
        arena = transforms.mirror(arena)
        steps.append("mirror")
    if rng.random() < 0.5:
        arena = _optional(arena, "translate",
                          lambda a: transforms.random_translation(a, rng), steps, not_applied)
    if rng.random() < 0.5:
        arena = _optional(arena, "jitter", lambda a: transforms.jitter(a, rng), steps,
                          not_applied)
    if rng.random() < 0.5 or not steps:
        arena = _optional(arena, "recolour", lambda a: transforms.recolour_walls(a, rng), steps,
                          not_applied)
    return arena, steps


def _optional(arena: Arena, name: str, step: Callable[[Arena], Arena], steps: list[str],
              not_applied: Counter) -> Arena:
    try:
        changed = step(arena)
    except transforms.NotApplicable as error:  # counted by kind: its numbers left out
        not_applied[f"{name}: " + re.sub(r"-?\d+(\.\d+)?", "N", str(error))] += 1
        return arena
    steps.append(name)
    return changed


def make_task_variants(task: Task, parent_path: Path, out: Path, settings: MakeSettings,
                       validator: Validator) -> TaskOutcome:
    """Make and validate up to ``settings.count`` variants of one task into ``out``."""
    outcome = TaskOutcome(task.task_id)
    config = load_config(parent_path)
    parent = config.arena()
    mark = pass_mark_of(task.task_id, parent.pass_mark).value
    base = {"parent": task.task_id, "level": task.level, "pass_mark": mark}
    try:
        verdict = validator.judge_parent(parent, parent_path, mark)
    except Exception as error:  # Rejected, or the physics diverged: recorded, never fatal
        reason, detail = ((error.reason, error.detail) if isinstance(error, Rejected)
                          else (PARENT_CRASH, f"{type(error).__name__}: {error}"[:300]))
        outcome.rows.append({**base, "variant_id": "", "outcome": REJECTED, "reason": reason,
                             "detail": detail, "transformations": "", "seed": "",
                             "file": ""})
        return outcome
    parent = dataclasses.replace(parent, pass_mark=mark)  # the competition's, carried over
    seen = {verdict.checksum}
    rng = task_rng(settings.seed, task.task_id)
    order = list(SYMMETRIES)
    rng.shuffle(order)
    order.remove((0, False))
    order.insert(len(SYMMETRIES) - 1, (0, False))  # the identity last: it needs another step
    for number in range(settings.allowance):
        if len(outcome.kept) == settings.count:
            break
        candidate_seed = rng.randrange(2**31)
        row = {**base, "seed": candidate_seed, "physics_build": verdict.physics_build,
               "heuristic_parent": passes_text(verdict.heuristic)}
        try:
            arena, steps = draw_candidate(parent, random.Random(candidate_seed),
                                          order[number % len(order)], outcome.not_applied)
        except Exception as error:  # a transformation's own failure: recorded, never fatal
            outcome.rows.append({**row, "variant_id": "", "outcome": REJECTED,
                                 "reason": TRANSFORM_CRASH, "transformations": "",
                                 "detail": f"{type(error).__name__}: {error}"[:300]})
            continue
        row["transformations"] = ";".join(steps)
        kept = _judge(task, config, arena, out, number, mark, verdict, seen, validator, row,
                      len(outcome.kept) + 1)
        if kept is not None:
            seen.add(kept.checksum)
            outcome.kept.append(row["variant_id"])
        outcome.rows.append(row)
    return outcome


def _judge(task: Task, config: ArenaConfig, arena: Arena, out: Path, number: int, mark: float,
           parent: Verdict, seen: set[str], validator: Validator, row: dict,
           k: int) -> Verdict | None:
    """Write the candidate, validate it, keep it as ``<task>-v<k>.yaml`` or delete it."""
    draft = out / f".candidate-{task.task_id}-c{number}.yaml"
    variant = dataclasses.replace(config, arenas=((config.first_id, arena),), source=None)
    try:
        draft.write_text(dump_config(variant), encoding="utf-8")
        try:
            written = load_config(draft).arena()
        except ArenaError as error:
            raise Rejected(INVALID, str(error)) from error
        verdict = validator.judge_variant(written, draft, mark, parent, seen)
    except Rejected as error:
        row.update(variant_id="", outcome=REJECTED, reason=error.reason,
                   detail=error.detail[:300], file="")
        draft.unlink(missing_ok=True)
        return None
    except Exception as error:  # the physics diverged, etc.: recorded, never fatal
        row.update(variant_id="", outcome=REJECTED, reason=CRASH,
                   detail=f"{type(error).__name__}: {error}"[:300], file="")
        draft.unlink(missing_ok=True)
        return None
    name = f"{task.task_id}-v{k}"
    final = out / f"{name}.yaml"
    os.replace(draft, final)
    row.update(variant_id=name, outcome=KEPT, reason="", detail="", file=final.name,
               oracle_rewards="/".join(f"{r:g}" for r in verdict.oracle_rewards),
               heuristic_variant=passes_text(verdict.heuristic, len(parent.heuristic)),
               placed_sha256=verdict.checksum)
    return verdict


def _task_job(task: Task, parent_path: str, out: str, settings: MakeSettings) -> TaskOutcome:
    """One task in a worker process (its own renderer); its own failure becomes a row."""
    validator = Validator(settings.validation)
    try:
        return make_task_variants(task, Path(parent_path), Path(out), settings, validator)
    except Exception as error:  # one task's failure must not lose the others'
        return _crashed(task, f"{type(error).__name__}: {error}")
    finally:
        validator.close()


def _crashed(task: Task, why: str) -> TaskOutcome:
    return TaskOutcome(task.task_id, rows=[{
        "variant_id": "", "parent": task.task_id, "level": task.level,
        "outcome": REJECTED, "reason": TASK_CRASH, "detail": why[:300]}])


def _task_outcome(outcome: Outcome) -> TaskOutcome:
    """The task's outcome, its rows saying where they were made.

    A job with none (its worker died) is the task's crash, made nowhere known.
    """
    made = _crashed(outcome.job.key, outcome.crash) if outcome.crashed else outcome.result
    placement = {"node_id": outcome.node_id, "host": outcome.host}
    return dataclasses.replace(made, rows=[{**row, **placement} for row in made.rows])


def file_sha256(path: Path) -> str:
    """The sha256 of a file's bytes (a task file's identity in requests and caches)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def request_of(tasks: list[Task], paths: dict[str, str], settings: MakeSettings) -> dict:
    """What a ``make`` is asked: two runs with the same request make the same folder."""
    return {"generator_version": GENERATOR_VERSION, "count": settings.count,
            "seed": settings.seed, "candidates": settings.allowance,
            "validation": json.loads(json.dumps(dataclasses.asdict(settings.validation))),
            "tasks": {task.task_id: file_sha256(Path(paths[task.task_id])) for task in tasks}}


def _differences(recorded: dict, request: dict) -> list[str]:
    """What differs between a folder's request and this one, in the words of the flags."""
    found = []
    for key, flag in (("generator_version", "generator version"), ("count", "--count"),
                      ("seed", "--seed"), ("candidates", "candidates per task")):
        if recorded.get(key) != request[key]:
            found.append(f"{flag} {recorded.get(key)} (now {request[key]})")
    old_checks, checks = recorded.get("validation") or {}, request["validation"]
    found += [f"validation {key} {old_checks.get(key)} (now {value})"
              for key, value in checks.items() if old_checks.get(key) != value]
    old_tasks, tasks = recorded.get("tasks") or {}, request["tasks"]
    if old_tasks.keys() != tasks.keys():
        gone, new = sorted(old_tasks.keys() - tasks.keys()), sorted(tasks.keys() - old_tasks.keys())
        found.append(f"other tasks ({len(old_tasks)} then, {len(tasks)} now; "
                     + "; ".join(part for part in (
                         f"not asked now: {', '.join(gone[:5])}{' ...' if len(gone) > 5 else ''}"
                         if gone else "",
                         f"new: {', '.join(new[:5])}{' ...' if len(new) > 5 else ''}"
                         if new else "") if part) + ")")
    else:
        changed = sorted(t for t in tasks if old_tasks[t] != tasks[t])
        if changed:
            found.append(f"other files for {', '.join(changed[:5])} (their sha256 differ)")
    return found


def _finished(out: Path, request: dict) -> dict[str, TaskOutcome]:
    """The tasks an earlier ``make`` of the same request into ``out`` finished.

    Raises:
        VariantRequestError: ``out`` was made for another request, or by an older ``make``
            that cannot be resumed (nothing in it is touched).
    """
    index, progress = out / INDEX_FILE, out / PROGRESS_FILE
    if not progress.exists():
        if index.exists():
            raise VariantRequestError(f"{out} holds variants already ({INDEX_FILE}) but no "
                                      f"{PROGRESS_FILE} to resume from; choose another --out")
        return {}
    try:
        recorded = json.loads(progress.read_text(encoding="utf-8"))
        if not isinstance(recorded, dict):
            raise ValueError("not a JSON object")
    except ValueError as error:
        raise VariantRequestError(f"{progress}: unreadable ({error}); choose another --out"
                                  ) from None
    differences = _differences(recorded.get("request") or {}, request)
    if differences:
        raise VariantRequestError(
            f"{out} holds variants made for another request: " + "; ".join(differences)
            + ". Rerun the same command to resume it, or choose another --out")
    rows = read_rows(out) if index.exists() else []
    not_applied = recorded.get("not_applied") or {}
    done: dict[str, TaskOutcome] = {}
    for row in rows:
        outcome = done.setdefault(row["parent"], TaskOutcome(
            row["parent"], not_applied=Counter(not_applied.get(row["parent"], {})),
            resumed=True))
        outcome.rows.append(row)
        if row["outcome"] == KEPT:
            outcome.kept.append(row["variant_id"])
    return done


def _clear_unfinished(out: Path, task_ids: Iterable[str]) -> None:
    """Delete what an interrupted task left (drafts, variants not yet in the index).

    The task is made again from its own seed, so these files come back the same.
    """
    for task_id in task_ids:
        for stray in (*out.glob(f".candidate-{task_id}-c*.yaml"), *out.glob(f"{task_id}-v*.yaml")):
            stray.unlink()


def make_variants(tasks: Iterable[Task], out: Path, settings: MakeSettings, *,
                  arenas_dir: str | Path | None = None, workers: int = 1,
                  on_task: Callable[[TaskOutcome], None] | None = None,
                  executor: str = "local", address: str | None = None) -> list[TaskOutcome]:
    """Make variants of ``tasks`` into ``out`` and write ``out/variants.csv``.

    Args:
        tasks: the parent tasks.
        out: the folder (created). If an earlier ``make`` of the same request was interrupted
            there, its finished tasks are kept and only the rest are made.
        settings: K, the seed, the validation.
        arenas_dir: where the testbed files are (as ``run --arenas-dir``).
        workers: worker processes (one task at a time each).
        on_task: called with each task's outcome as it finishes (progress lines).
        executor: ``local`` (this machine) or ``ray`` (``llm_aai.execution.EXECUTORS``).
        address: the Ray cluster to join (``ray`` only; None starts Ray here).

    Returns:
        Each task's outcome: those resumed first (``resumed`` set), then the rest in the
        order they finished.

    A task whose layout cannot be transformed gets one rejected row with the reason; a task
    whose worker dies gets one with ``TASK_CRASH`` (``llm_aai.execution``). An interrupt
    (KeyboardInterrupt, which the command raises on SIGTERM too) ends the workers and
    propagates; the finished tasks stay in ``out``.

    Raises:
        ArenaNotFoundError: a task's file is missing (checked before anything runs).
        VariantRequestError: ``out`` holds variants of another request, or no task given can
            be transformed (the reasons).
    """
    out = Path(out)
    tasks = sorted(set(tasks))
    paths = {task.task_id: str(resolve_arena_path(task.task_id, arenas_dir)) for task in tasks}
    refused = {task.task_id: reason for task in tasks
               if (reason := untransformable(Path(paths[task.task_id]))) is not None}
    if refused and len(refused) == len(tasks):
        raise VariantRequestError("; ".join(f"{task_id}: {UNTRANSFORMABLE}: {reason}"
                                            for task_id, reason in refused.items()))
    request = request_of(tasks, paths, settings)
    done = _finished(out, request) if out.is_dir() else {}
    out.mkdir(parents=True, exist_ok=True)
    _clear_unfinished(out, (task.task_id for task in tasks if task.task_id not in done))
    outcomes = list(done.values())

    def save() -> None:
        """The progress file first, then the index: a task is done once its rows are in."""
        progress = {"request": request, "not_applied": {
            task.task_id: dict(sorted(done[task.task_id].not_applied.items()))
            for task in tasks if task.task_id in done}}
        draft = out / f".{PROGRESS_FILE}.tmp"
        draft.write_text(json.dumps(progress, indent=1, sort_keys=True) + "\n",
                         encoding="utf-8")
        os.replace(draft, out / PROGRESS_FILE)
        write_rows(out, [row for task in tasks if task.task_id in done
                         for row in done[task.task_id].rows])

    def finish(outcome: TaskOutcome) -> None:
        done[outcome.task_id] = outcome
        save()
        outcomes.append(outcome)
        if on_task:
            on_task(outcome)

    save()
    for task in tasks:
        if task.task_id in refused and task.task_id not in done:
            finish(TaskOutcome(task.task_id, rows=[{
                "variant_id": "", "parent": task.task_id, "level": task.level,
                "outcome": REJECTED, "reason": UNTRANSFORMABLE,
                "detail": refused[task.task_id]}]))
    todo = [task for task in tasks if task.task_id not in done]
    # absolute paths: a job runs in a worker whose folder need not be this one (a Ray
    # worker's is its node's, on another machine over ray://)
    jobs = [Job(task, _task_job, (task, str(Path(paths[task.task_id]).absolute()),
                                  str(out.absolute()), settings))
            for task in todo]
    # locally, one task in this process needs no worker; more go to spawned workers
    if executor == "local" and (workers <= 1 or len(todo) <= 1):
        executor = "in-process"
    with make_executor(executor, max(1, min(workers, len(todo))), address) as pool:
        for outcome in pool.run(jobs):
            finish(_task_outcome(outcome))
    return outcomes


def untransformable(path: Path) -> str | None:
    """Why no variant can be made of this file (several arenas, nothing fixed), or None."""
    config = load_config(path)
    if len(config.arenas) != 1:
        return (f"{path} holds {len(config.arenas)} arenas; variants are made of single-arena "
                "files")
    arena = config.arena()
    if not any(p.x >= 0 or p.z >= 0 for item in arena.items for p in item.positions):
        return ("every object is placed at random, so no transformation changes the task (it "
                "is new every episode already)")
    return None
