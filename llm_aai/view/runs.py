"""What the runs page says about each run: settings from its manifest, totals from its episodes.

The manifest is read by ``llm_aai.logs.read_manifest`` and its settings, typed, by
``llm_aai.settings.settings_of``, as ``llm_aai.analysis.load`` reads them; the table and figure
of pass rates come from ``llm_aai.analysis`` unchanged.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from llm_aai.analysis.metrics import priced_cost
from llm_aai.analysis.report import cost_text
from llm_aai.frames import FrameFormat
from llm_aai.logs.store import read_manifest
from llm_aai.settings import settings_of


@dataclass(frozen=True)
class RunSummary:
    """One run's card on the runs page.

    Attributes:
        run_id: the manifest's run id.
        path: the run directory.
        settings: ``(name, value)`` pairs worth seeing before trusting a number.
        totals: ``(name, value)`` pairs counted from the run's episodes.
        prompt_text: the rendered system prompt, shown folded.

    """

    run_id: str
    path: str
    settings: tuple[tuple[str, str], ...]
    totals: tuple[tuple[str, str], ...]
    prompt_text: str


def run_summary(run: pd.Series, episodes: pd.DataFrame,
                attempts: pd.DataFrame | None = None) -> RunSummary:
    """Summarise one row of ``Runs.runs`` with the episodes counted from it.

    ``attempts`` (``Runs.attempts``) adds what its attempts set aside or unfinished spent to
    the cost shown.
    """
    manifest = read_manifest(Path(run["path"]))  # load_runs has already checked it
    resolved = settings_of(manifest)
    config = resolved.config
    agent, prompt = manifest.agent, manifest.prompt
    seeds, versions, git = manifest.seeds, manifest.versions, manifest.git or {}
    settings = [
        ("model", config.model),
        ("model id", _text(agent.get("litellm_model") or agent.get("name"))),
        ("prompt", config.prompt),
        ("prompt sha256", _text(prompt.get("sha256"))),
        ("script mode", config.script_mode),
        ("backend", config.backend),
        ("resolution", str(config.resolution)),
        ("frames", _frames(config.frames)),
        ("tasks", str(len(resolved.tasks))),
        ("trials", str(config.trials)),
        ("run seed", _text(seeds.get("run", config.seed))),
        ("protocol", ", ".join(f"{k}={v}" for k, v in
                               dataclasses.asdict(config.protocol).items())),
        ("created", _text(manifest.created)),
        ("versions", ", ".join(f"{k} {v}" for k, v in versions.items()) or "-"),
        ("git", (f"{git.get('revision', '')[:12]}" + (" (dirty)" if git.get("dirty") else ""))
         if git else "-"),
    ]
    mine = episodes[episodes["run_id"] == run["run_id"]]
    tried = None if attempts is None else attempts[attempts["run_id"] == run["run_id"]]
    return RunSummary(str(run["run_id"]), str(run["path"]), tuple(settings),
                      _totals(run, mine, tried), str(prompt.get("system_text") or ""))


def _totals(run: pd.Series, episodes: pd.DataFrame,
            attempts: pd.DataFrame | None) -> tuple[tuple[str, str], ...]:
    agent = episodes[~episodes["infra_failure"]]
    passed = int(agent["passed"].sum())
    tokens_in = int(episodes["input_tokens"].sum())
    tokens_out = int(episodes["output_tokens"].sum())
    return (
        ("episodes", f"{len(episodes)} finished, {int(run['unfinished'])} unfinished, "
                     f"{int(run['set_aside_attempts'])} attempts set aside"),
        ("passed", f"{passed}/{len(agent)}"),
        ("infrastructure failures", str(int(episodes["infra_failure"].sum()))),
        ("invalid replies", f"{int(agent['invalid_replies'].sum())} of "
                            f"{int(agent['scripts_used'].sum())} scripts"),
        ("tokens", f"{tokens_in:,} in, {tokens_out:,} out"),
        ("cost", run_cost(episodes, attempts)),
    )


def run_cost(episodes: pd.DataFrame, attempts: pd.DataFrame | None = None) -> str:
    """What the run spent worded as ``analyze`` words it (``report.cost_text``), in dollars.

    The episodes' and the ``attempts``' (``Runs.attempts``: set aside or unfinished) measured
    cost, with the estimate charged for calls sent without a usable reply apart. Known in
    part, the known part is shown as a lower bound with what it leaves out; never known,
    ``unknown``. Logs from before prices were looked up recorded an unknown cost as 0, so $0
    with tokens used is taken as unknown too.
    """
    parts = [episodes] if attempts is None else [episodes, attempts]
    if not sum(int(part["input_tokens"].sum() + part["output_tokens"].sum()) for part in parts):
        return "$0 (no model calls)"
    cost = priced_cost(episodes, attempts)
    if not cost["unpriced_episodes"] and not cost["unpriced_attempts"] and not cost["cost_usd"]:
        cost.update(unpriced_episodes=len(episodes), unpriced_attempts=cost["attempts"])
    return cost_text(cost, len(episodes), dollars="${:.4f}")


def _frames(frames: FrameFormat) -> str:
    return f"jpeg (quality {frames.quality})" if frames.kind == "jpeg" else frames.kind


def _text(value: Any) -> str:
    return "-" if value is None else str(value)

