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


def run_summary(run: pd.Series, episodes: pd.DataFrame) -> RunSummary:
    """Summarise one row of ``Runs.runs`` with the episodes counted from it."""
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
    return RunSummary(str(run["run_id"]), str(run["path"]), tuple(settings),
                      _totals(run, mine), str(prompt.get("system_text") or ""))


def _totals(run: pd.Series, episodes: pd.DataFrame) -> tuple[tuple[str, str], ...]:
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
        ("cost", run_cost(episodes)),
    )


def run_cost(episodes: pd.DataFrame) -> str:
    """The episodes' cost worded as ``analyze`` words it (``report.cost_text``), in dollars.

    Known in part, the known part is shown as a lower bound with the episodes it leaves
    out; never known, ``unknown``. Logs from before prices were looked up recorded an
    unknown cost as 0, so $0 with tokens used is taken as unknown too.
    """
    if not int(episodes["input_tokens"].sum() + episodes["output_tokens"].sum()):
        return "$0 (no model calls)"
    cost = priced_cost(episodes)
    if not cost["unpriced_episodes"] and not cost["cost_usd"]:
        return cost_text(0.0, len(episodes), len(episodes))
    return cost_text(cost["cost_usd"], cost["unpriced_episodes"], len(episodes),
                     dollars="${:.4f}")


def _frames(frames: FrameFormat) -> str:
    return f"jpeg (quality {frames.quality})" if frames.kind == "jpeg" else frames.kind


def _text(value: Any) -> str:
    return "-" if value is None else str(value)

