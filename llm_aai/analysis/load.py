"""Load run directories into tidy tables: one row per episode, one row per turn.

Only sealed episodes (those with a ``result.json``) are analysed: an episode without a result was
interrupted and will be rerun on resume, so counting it would bias the pass rate. Earlier attempts
moved aside after infrastructure failures (``<id>.attempt-N``) are counted, not analysed; what
they and unfinished episodes spent is read (``Runs.attempts``) so the cost shown is all the run
paid for.

Every episode is counted once: a directory named twice (however the path is spelled) is read
once, and an episode whose ``(run_id, episode_id)`` was already read from another directory (a
copy of the run) is skipped if its result is identical and refused if it differs, since two
different outcomes for one episode mean the directories cannot be pooled.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from llm_aai.analysis.levels import LEVEL_NAMES
from llm_aai.logs.browser import browser_participant
from llm_aai.logs.schema import (
    CONVERSATION_COLUMNS,
    SUMMARY_COLUMNS,
    RunManifest,
    SchemaError,
    summed_cost,
    to_dict,
)
from llm_aai.logs.store import (
    EPISODES,
    MANIFEST,
    RESULT,
    TURNS,
    read_manifest,
    read_result,
    read_turns,
    read_turns_until_cut,
)
from llm_aai.protocol.modes import mode_label
from llm_aai.settings import ResolvedRun, RunConfig, settings_of

INFRASTRUCTURE = "infrastructure"
"""The ``end_reason`` of an episode lost to the model provider, not to the agent."""

PAPER = "paper"
"""``mode_label`` of the paper's mode: the one a label does not name."""

RUN_COLUMNS = ("run_id", "model", "prompt", "backend", "agent_name", "litellm_model", "mode",
               "probe")
ATTEMPT_COLUMNS = ("run_id", "label", "attempt_dir", "kind", "input_tokens", "output_tokens",
                   "cost_usd", "cost_known", "unanswered_cost_usd", "unreadable")
"""``Runs.attempts``: what each attempt without a counted result spent (``_attempt_row``);
``unreadable``: why its logs could not be read (None when they were)."""


class RunDirectoryError(ValueError):
    """A path is not a readable llm-aai run directory; the message names the path and field."""


@dataclass(frozen=True)
class Runs:
    """Everything loaded from one or more run directories.

    Attributes:
        episodes: one row per sealed episode: the EpisodeResult fields, the run's identity
            (``run_id, model, prompt, backend, agent_name, litellm_model``), ``label`` (what
            tables and figures group by), ``level_name``, ``infra_failure`` and ``episode_dir``.
        turns: one row per TurnRecord of those episodes, keyed by ``run_id, episode_id, turn``
            (empty when loaded with ``with_turns=False``).
        runs: one row per run directory, with counts of finished episodes (those counted from
            this directory), duplicates (identical copies of episodes already counted),
            unfinished episodes and attempts set aside after infrastructure failures.
        attempts: one row per attempt that called the model but is no counted result (set
            aside as ``<id>.attempt-N``, or unfinished), with what it spent
            (``ATTEMPT_COLUMNS``): not analysed, but paid for, so the cost shown counts it
            (``metrics.priced_cost``). One whose logs cannot be read is a row of unknown
            cost saying why (``unreadable``), not an error: it is no result.

    """

    episodes: pd.DataFrame
    turns: pd.DataFrame
    runs: pd.DataFrame
    attempts: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(columns=list(ATTEMPT_COLUMNS)))


def load_runs(paths: Iterable[str | Path], *, with_turns: bool = True) -> Runs:
    """Read run directories into tidy DataFrames.

    Runs with the same model, prompt and mode are pooled under one label (e.g. a run split in
    two); when one model appears with several prompts, the label names the prompt too, and a
    run in a mode other than the paper's (``--control action``, ``--observe-every``...) names
    its mode, so runs of different modes are never pooled.

    Args:
        paths: run directories (each with a ``manifest.json``).
        with_turns: also read every ``turns.jsonl``; metrics only need the episodes.

    Raises:
        RunDirectoryError: a path is missing, is not a run directory, or holds a malformed log;
            or two directories hold the same episode of the same run with different results.

    """
    paths = _distinct([Path(path) for path in paths])
    if not paths:
        raise RunDirectoryError("no run directories given")
    episode_rows: list[dict[str, Any]] = []
    turn_rows: list[dict[str, Any]] = []
    run_rows: list[dict[str, Any]] = []
    attempt_rows: dict[tuple[str, str], dict[str, Any]] = {}  # a copy's attempts counted once
    seen: dict[tuple[str, str], dict[str, Any]] = {}
    for path in paths:
        identity = _run_identity(path)
        finished, unfinished, set_aside = _episode_dirs(path)
        counted = 0
        for directory in finished:
            row = _episode_row(directory, identity)
            if _already_counted(row, seen):
                continue
            counted += 1
            episode_rows.append(row)
            if with_turns:
                turn_rows.extend(_turn_rows(directory, identity["run_id"]))
        for directory in [*set_aside, *unfinished]:
            attempt = _attempt_row(directory, identity)
            if attempt is not None:
                attempt_rows.setdefault((identity["run_id"], directory.name), attempt)
        run_rows.append({**identity, "path": str(path), "finished": counted,
                         "duplicates": len(finished) - counted, "unfinished": len(unfinished),
                         "set_aside_attempts": len(set_aside)})
    episodes = _episodes_frame(episode_rows)
    runs = pd.DataFrame(run_rows)
    labels = _labels(runs)
    runs["label"] = [labels[key] for key in
                     zip(runs["model"], runs["prompt"], runs["mode"], strict=True)]
    episodes["label"] = [labels[key] for key in
                         zip(episodes["model"], episodes["prompt"], episodes["mode"], strict=True)]
    attempts = pd.DataFrame(list(attempt_rows.values()), columns=list(ATTEMPT_COLUMNS))
    attempts["label"] = attempts["run_id"].map(dict(zip(runs["run_id"], runs["label"],
                                                        strict=True)))
    return Runs(episodes=episodes, turns=_turns_frame(turn_rows), runs=runs, attempts=attempts)


def _distinct(paths: list[Path]) -> list[Path]:
    """Drop repeats of a directory, comparing resolved paths (relative, absolute, ``x/``)."""
    seen: set[Path] = set()
    distinct = []
    for path in paths:
        if path.resolve() not in seen:
            seen.add(path.resolve())
            distinct.append(path)
    return distinct


def _already_counted(row: dict[str, Any], seen: dict[tuple[str, str], dict[str, Any]]) -> bool:
    """True if this episode was read before from another copy of the run, with the same result.

    Raises:
        RunDirectoryError: the earlier copy has a different result (or run identity).

    """
    key = (row["run_id"], row["episode_id"])
    first = seen.setdefault(key, row)
    if first is row:
        return False
    if {**first, "episode_dir": None} != {**row, "episode_dir": None}:
        raise RunDirectoryError(
            f"run {key[0]!r} episode {key[1]!r} appears in {first['episode_dir']} and "
            f"{row['episode_dir']} with different results; give only one copy of the run, or "
            "give one of them another run_id in its manifest.json")
    return True


def probe_of(config: RunConfig) -> str:
    """Which probe a run is: ``plan``, or its observation (``image``, ``text``, ``both``).

    An allocentric text run reads ``text (allocentric)``; runs from before the probes
    existed recorded no observation and showed images (the config's default).
    """
    if config.prompt == "plan":
        return "plan"
    if config.observation != "image" and config.perspective != "egocentric":
        return f"{config.observation} ({config.perspective})"
    return config.observation


def _run_identity(path: Path) -> dict[str, Any]:
    """Read who ran from the manifest; errors name the file and the missing field."""
    if not path.is_dir():
        raise RunDirectoryError(f"{path}: no such directory")
    try:
        manifest = read_manifest(path)
    except (OSError, SchemaError) as error:  # no manifest, or a malformed one
        raise RunDirectoryError(str(error)) from error
    try:
        run = settings_of(manifest)
    except SchemaError as error:  # settings that make no run
        raise RunDirectoryError(f"{path / MANIFEST}: {error}") from error
    config = run.config
    return {
        "run_id": manifest.run_id or path.name,
        "model": config.model,
        "prompt": config.prompt,
        "backend": config.backend,
        "agent_name": manifest.agent_name,
        # who played a run in the browser, and how: it is continued there, not by --resume
        **dict(zip(("browser_participant", "browser_interface"),
                   browser_participant(manifest.agent) or (None, None), strict=True)),
        "litellm_model": manifest.agent.get("litellm_model"),
        "probe": probe_of(config),
        "settings": json.dumps(_settings(manifest, run), sort_keys=True),
        "cost_known": run.cost_known,  # False: a model without a price
        "mode": mode_label(config.modes, config.protocol.max_scripts),
        "across_tasks": config.modes.across_tasks,  # a trial's episodes in one conversation
        # turns whose server counted far fewer prompt tokens than were sent (lost input)
        "lost_input_turns": int(((manifest.warnings or {}).get("lost_input") or {})
                                .get("turns", 0)),
    }


SAMPLING_OPTIONS = ("temperature", "max_tokens", "keep_last_images", "keep_last_turns",
                    "extra_params", "fold_system_prompt")
"""Model options that change what the model answers (timeouts, retries and concurrency don't)."""


def _settings(manifest: RunManifest, run: ResolvedRun) -> dict[str, Any]:
    """What, besides the model and prompt name, can change a run's results.

    Runs are pooled by model and prompt name; runs pooled with different values here (a
    shorter script cap, another resolution, an alias that now means another model, another
    temperature, an edited prompt) are flagged by ``pooling_conflicts`` rather than silently
    mixed.
    """
    config = run.config
    settings: dict[str, Any] = {
        "backend": config.backend, "resolution": config.resolution,
        "script_mode": config.script_mode, "frames": config.frames.kind,
        "jpeg_quality": config.frames.quality}
    settings.update({f"protocol.{key}": value
                     for key, value in dataclasses.asdict(config.protocol).items()})
    settings["model id"] = manifest.agent.get("litellm_model")
    options = manifest.agent.get("options", {})
    settings.update({key: options.get(key) for key in SAMPLING_OPTIONS})
    settings["prompt sha256"] = manifest.prompt.get("sha256")
    settings["turn messages sha256"] = manifest.prompt.get("turn_messages_sha256")
    settings["example sha256"] = (manifest.prompt.get("example") or {}).get("sha256")
    settings.update({"physics_build": config.physics_build, "observation": config.observation,
                     "perspective": config.perspective, "oracle_budget": config.oracle_budget})
    settings[ARENAS] = dict(manifest.arenas or {})
    return settings


ARENAS = "arena sha256"
"""The settings key of a run's arena files by task: only tasks two runs share are compared."""


def repeated_seeds(episodes: pd.DataFrame) -> list[str]:
    """One line per label whose pooled runs played the same task with the same seed.

    Two runs started with the same ``--seed`` give the same episode seeds, so a deterministic
    agent plays the same episodes twice: counted as separate trials they would narrow the
    confidence interval without adding evidence.
    """
    lines = []
    for label, group in episodes.groupby("label", sort=False):
        if group["run_id"].nunique() < 2:
            continue
        first_run = group.groupby(["task_id", "seed"])["run_id"].transform("first")
        repeats = group["run_id"] != first_run  # within one run (a replay's trials) is fine
        if repeats.any():
            runs = ", ".join(sorted(group.loc[repeats, "run_id"].unique()))
            lines.append(f"{label}: {int(repeats.sum())} episode(s) in {runs} repeat the task "
                         "and seed of an episode in another pooled run (runs started with the "
                         "same --seed); they are not independent trials")
    return lines


def pooling_conflicts(runs: pd.DataFrame) -> list[str]:
    """One line per label whose pooled runs differ in a setting that changes results."""
    lines = []
    for label, group in runs.groupby("label", sort=False):
        settings = {row.run_id: json.loads(row.settings) for row in group.itertuples()}
        if len(settings) < 2:
            continue
        arenas, detail = setting_differences(settings)
        if arenas:
            lines.append(f"{label} pools runs whose arena files differ for {', '.join(arenas)} "
                         "(their manifests' sha256); analyse them separately to compare like "
                         "with like")
        if detail:
            lines.append(f"{label} pools runs with different settings ({detail}); analyse "
                         "them separately to compare like with like")
    return lines


def setting_differences(settings: dict[str, dict[str, Any]]) -> tuple[list[str], str]:
    """What runs differ in, from each one's ``settings`` column (parsed), keyed by a name.

    Returns:
        The tasks two of them played from arena files that differ (a task only one played is
        no conflict), and the other settings that differ, as ``name: key=value, ...; name: ...``
        (empty when none do).
    """
    arenas = [values.get(ARENAS, {}) for values in settings.values()]
    differing = sorted({task for a, b in itertools.combinations(arenas, 2)
                        for task in a.keys() & b.keys() if a[task] != b[task]})
    rest = {name: {key: value for key, value in values.items() if key != ARENAS}
            for name, values in settings.items()}
    keys = sorted({key for values in rest.values() for key in values})
    differ = [key for key in keys if len({json.dumps(values.get(key))
                                          for values in rest.values()}) > 1]
    detail = "; ".join(f"{name}: " + ", ".join(f"{key}={values.get(key)}" for key in differ)
                       for name, values in rest.items()) if differ else ""
    return differing, detail


def _episode_dirs(path: Path) -> tuple[list[Path], list[Path], list[Path]]:
    """Split episode directories into sealed, unfinished and set-aside failed attempts."""
    root = path / EPISODES
    finished, unfinished, set_aside = [], [], []
    if root.is_dir():
        for directory in sorted(p for p in root.iterdir() if p.is_dir()):
            if ".attempt-" in directory.name:
                set_aside.append(directory)
            elif (directory / RESULT).is_file():
                finished.append(directory)
            else:
                unfinished.append(directory)
    return finished, unfinished, set_aside


def _episode_row(directory: Path, identity: dict[str, Any]) -> dict[str, Any]:
    try:
        result = read_result(directory)
    except (OSError, SchemaError) as error:
        raise RunDirectoryError(str(error)) from error
    row = {**identity, **to_dict(result)}
    # a run without a price, or an episode whose calls had none: its cost is not a number
    row["cost_known"] = identity["cost_known"] and result.cost_usd is not None
    row["infra_failure"] = result.end_reason == INFRASTRUCTURE or result.infra_error is not None
    row["episode_dir"] = str(directory)
    return row


def _attempt_row(directory: Path, identity: dict[str, Any]) -> dict[str, Any] | None:
    """What an attempt without a counted result spent, as ``RunStore.spent`` counts it.

    A set-aside attempt sealed before it was set aside (an infrastructure failure) says so in
    its result; one stopped before it was sealed, or still unfinished, in its turn log's calls
    (a last line cut by a kill left out). The measured cost (``cost_usd``: NaN when a call
    had no known price) and the estimate charged for calls sent without a usable reply
    (``unanswered_cost_usd``) are kept apart, as the logs keep them.

    Returns:
        The row; None for an attempt that spent nothing (no tokens, no cost, no estimate
        charged: stopped before its first call). An attempt whose result or turn log cannot
        be read is a row of unknown cost, ``unreadable`` saying why: it is no result, so a
        damaged log of it does not stop the run's analysis, as it did not before attempts
        were priced.

    """
    kind = "set aside" if ".attempt-" in directory.name else "unfinished"
    row = {"run_id": identity["run_id"], "label": None, "attempt_dir": str(directory),
           "kind": kind, "unreadable": None}
    try:
        if (directory / RESULT).is_file():
            result = read_result(directory)
            tokens = (result.input_tokens, result.output_tokens)
            cost, unanswered = result.cost_usd, result.unanswered_cost_usd or 0.0
        else:
            turns = read_turns_until_cut(directory)[0] if (directory / TURNS).is_file() else []
            tokens = (sum(t.usage.input_tokens for t in turns),
                      sum(t.usage.output_tokens for t in turns))
            cost = summed_cost(t.usage.cost_usd for t in turns)
            unanswered = sum(t.usage.unanswered_cost_usd or 0.0 for t in turns)
    except (OSError, SchemaError) as error:
        return {**row, "input_tokens": 0, "output_tokens": 0, "cost_usd": float("nan"),
                "cost_known": False, "unanswered_cost_usd": 0.0, "unreadable": str(error)}
    if not any(tokens) and cost == 0 and not unanswered:
        return None
    return {**row, "input_tokens": tokens[0], "output_tokens": tokens[1],
            "cost_usd": float("nan") if cost is None else cost,
            "cost_known": identity["cost_known"] and cost is not None,
            "unanswered_cost_usd": unanswered}


def _turn_rows(directory: Path, run_id: str) -> list[dict[str, Any]]:
    try:
        turns = read_turns(directory)
    except (OSError, SchemaError) as error:
        raise RunDirectoryError(str(error)) from error
    rows = []
    for turn in turns:
        row = to_dict(turn)
        usage = row.pop("usage")
        row.pop("schema")
        row.update(usage)
        row["invalid"] = turn.reply is not None and turn.commands is None
        row["n_commands"] = len(turn.commands) if turn.commands is not None else 0
        row["n_images"] = len(turn.sent_images)
        rows.append({"run_id": run_id, "episode_id": directory.name, **row})
    return rows


def _episodes_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    columns = [*RUN_COLUMNS, *SUMMARY_COLUMNS, "infra_failure", "episode_dir", "cost_known",
               *CONVERSATION_COLUMNS]
    frame = pd.DataFrame(rows, columns=columns)
    frame["level"] = frame["level"].astype(int)
    frame["passed"] = frame["passed"].astype(bool)
    frame["infra_failure"] = frame["infra_failure"].astype(bool)
    frame["cost_usd"] = pd.to_numeric(frame["cost_usd"])  # an unknown cost (None) is NaN
    frame.insert(frame.columns.get_loc("level") + 1, "level_name",
                 frame["level"].map(LEVEL_NAMES))
    return frame


def _turns_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    if not rows:
        return pd.DataFrame(columns=["run_id", "episode_id", "turn"])
    return pd.DataFrame(rows)


def _labels(runs: pd.DataFrame) -> dict[tuple[str, str, str], str]:
    """``(model, prompt, mode) -> label``.

    The model, plus the prompt where the model has several, plus the mode where it is not the
    paper's (``claude (action control)``).
    """
    prompts = runs.groupby("model")["prompt"].nunique()
    labels = {}
    for model, prompt, mode in zip(runs["model"], runs["prompt"], runs["mode"], strict=True):
        label = model if prompts[model] == 1 else f"{model} [{prompt}]"
        labels[(model, prompt, mode)] = label if mode == PAPER else f"{label} ({mode})"
    return labels
