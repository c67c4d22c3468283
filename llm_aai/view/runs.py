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
from llm_aai.logs.schema import RunManifest
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
                      _totals(run, mine, tried, zero_is_unknown=not _cost_recorded(manifest)),
                      str(prompt.get("system_text") or ""))


def _cost_recorded(manifest: RunManifest) -> bool:
    """Whether the manifest says if the run's costs are known (its price looked up).

    A manifest of settings (``run``) always does; an older one does with ``config.cost_known``
    or ``config.price_per_mtok``. One that does not predates prices: it logged an unknown cost
    as 0.
    """
    old = manifest.config or {}
    return manifest.run is not None or "cost_known" in old or "price_per_mtok" in old


def _totals(run: pd.Series, episodes: pd.DataFrame, attempts: pd.DataFrame | None, *,
            zero_is_unknown: bool = False) -> tuple[tuple[str, str], ...]:
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
        ("cost", run_cost(episodes, attempts, zero_is_unknown=zero_is_unknown)),
    )


def run_cost(episodes: pd.DataFrame, attempts: pd.DataFrame | None = None, *,
             zero_is_unknown: bool = False) -> str:
    """What the run spent worded as ``analyze`` words it (``report.cost_text``), in dollars.

    The episodes' and the ``attempts``' (``Runs.attempts``: set aside or unfinished) measured
    cost, with the estimate charged for calls sent without a usable reply apart. Known in
    part, the known part is shown as a lower bound with what it leaves out; never known,
    ``unknown``. A cost of $0 with every price known is $0.00 (a model priced at nothing);
    only logs from before prices were looked up (``zero_is_unknown``: the manifest records
    neither ``cost_known`` nor a price) recorded an unknown cost as 0, so there $0 with
    tokens used is taken as unknown. No tokens and no estimate charged: no model calls.
    """
    parts = [episodes] if attempts is None else [episodes, attempts]
    tokens = sum(int(part["input_tokens"].sum() + part["output_tokens"].sum()) for part in parts)
    cost = priced_cost(episodes, attempts)
    if not tokens and not cost["unanswered_cost_usd"]:
        return "$0 (no model calls)"
    if zero_is_unknown and tokens and not cost["unpriced_episodes"] \
            and not cost["unpriced_attempts"] and not cost["cost_usd"]:
        cost.update(unpriced_episodes=len(episodes), unpriced_attempts=cost["attempts"])
    return cost_text(cost, len(episodes), dollars="${:.4f}")


def _frames(frames: FrameFormat) -> str:
    return f"jpeg (quality {frames.quality})" if frames.kind == "jpeg" else frames.kind


def _text(value: Any) -> str:
    return "-" if value is None else str(value)

