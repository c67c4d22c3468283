"""What a run's manifest records: made once as the run starts, added to as each invocation ends.

The manifest says later exactly what ran (settings, seeds, arena checksums, package versions,
the source revision, the models a self-hosted server lists) and is what a resume rebuilds the
run from; the response cache's use and the turns that lost input are summed over invocations.
"""

from __future__ import annotations

import copy
import dataclasses
import os
import platform
import subprocess
from collections.abc import Mapping
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from llm_aai.arena import ARENAS_ENV, file_sha256
from llm_aai.arena.catalog import CACHE, arenas_location
from llm_aai.llm.cache import ResponseCache
from llm_aai.llm.served import served_models
from llm_aai.logs.schema import SCHEMA_VERSION, RunManifest
from llm_aai.logs.store import RunStore
from llm_aai.runner.plan import Plan
from llm_aai.runner.suite import episode_id


def build_manifest(run_id: str, plan: Plan) -> RunManifest:
    """Everything needed to know later exactly what ran, and to resume it (never a secret)."""
    run = plan.run
    return RunManifest(
        run_id=run_id,
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        run=run.to_record(),
        agent=_with_served_models(plan.agent.describe(), plan.agent.options.get("api_base")),
        prompt=plan.prompt.manifest(),
        seeds={"run": run.config.seed, "episodes": {
            episode_id(task_id, trial): run.seed_of(task_id, trial)
            for task_id in run.tasks for trial in range(1, run.config.trials + 1)}},
        arenas={task_id: file_sha256(path) for task_id, path in plan.arena_paths.items()},
        arenas_location=None if run.config.variants is not None else arenas_found(
            run.config.arenas_dir),
        versions=_versions(),
        git=_git_revision(),
        host={"python": platform.python_version(), "platform": platform.platform(),
              "mujoco_gl": os.environ.get("MUJOCO_GL")},
        schema_version=SCHEMA_VERSION,
    )


_SOURCES = {"--arenas-dir": "--arenas-dir", f"${ARENAS_ENV}": f"env:{ARENAS_ENV}",
            CACHE: "cache"}
"""``arenas_location``'s words for how the folder was chosen, by ``arenas_location``'s."""


def arenas_found(arenas_dir: str | Path | None) -> dict[str, str]:
    """Where the run reads its testbed files now, for the manifest's ``arenas_location``.

    Recorded because ``$LLM_AAI_ARENAS`` and the cache are not settings: without it a later
    ``grounding`` or ``replay --resimulate``, run without the variable, would look in the
    cache (and try to download) instead of the folder the run used.
    """
    folder, how = arenas_location(arenas_dir)
    return {"folder": str(folder.resolve()), "source": _SOURCES[how]}


NOT_APPLICABLE_ELSEWHERE = (
    "model_options.api_base", "model_options.temperature", "model_options.max_tokens",
    "model_options.timeout_s", "model_options.max_retries", "model_options.provider_concurrency",
    "model_options.provider_rpm", "model_options.price_per_mtok", "model_options.stop",
    "model_options.sampling", "concurrency", "max_relaunches", "relaunch_delay_s",
    "stop_after_failed_episodes", "budget_usd", "cache_dir")
"""The settings of the runner's own model client (litellm's request, its retries and timeout,
prices) and of its scheduler (episodes at once, relaunches, budget, response cache): a driver
whose own framework calls the model and schedules the episodes (Inspect) uses none of them."""


def with_calls_made_elsewhere(manifest: RunManifest, calls: Mapping[str, Any]) -> RunManifest:
    """The manifest of a run whose model another framework called, saying what it used.

    The agent record gets ``calls`` (what the framework called the model with, e.g. Inspect's
    model and GenerateConfig; its ``may_change`` names the fields of it a continued run may
    differ in, which ``check_same_run`` leaves out) and ``not_applicable`` (the settings of
    ours it did not use, ``NOT_APPLICABLE_ELSEWHERE``); those settings are left out of
    ``run.config``, so no reader takes our client's defaults for the ones the calls were made
    with (a reader of the settings gets their defaults back, as for any field a record lacks).
    The costs are the framework's: ``run.cost_known`` is false.
    """
    run = copy.deepcopy(dict(manifest.run or {}))
    for dotted in NOT_APPLICABLE_ELSEWHERE:
        *parents, name = dotted.split(".")
        record = run["config"]
        for parent in parents:
            record = record[parent]
        del record[name]
    run["cost_known"] = False
    agent = {**manifest.agent, "calls": dict(calls),
             "not_applicable": [f"run.config.{dotted}" for dotted in NOT_APPLICABLE_ELSEWHERE]}
    return dataclasses.replace(manifest, run=run, agent=agent)


def _with_served_models(agent: dict[str, Any], api_base: str | None) -> dict[str, Any]:
    """The agent's description and, for a self-hosted server, the models it lists.

    The alias the run calls names no weights (None: the server lists none).
    """
    if not api_base:
        return agent
    listed = served_models(api_base)
    return {**agent, "served_models": list(listed) if listed is not None else None}


def _versions() -> dict[str, str | None]:
    versions = {}
    for package in ("llm-aai", "mujoco", "gymnasium", "litellm", "numpy"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return versions


def _git_revision() -> dict[str, Any] | None:
    """The source revision when running from a checkout (None from an installed wheel)."""
    source = Path(__file__).resolve().parents[2]
    try:
        revision = subprocess.run(["git", "-C", str(source), "rev-parse", "HEAD"],
                                  capture_output=True, text=True, timeout=10, check=True)
        status = subprocess.run(["git", "-C", str(source), "status", "--porcelain"],
                                capture_output=True, text=True, timeout=10, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return {"revision": revision.stdout.strip(), "dirty": bool(status.stdout.strip())}


def record_cache_use(store: RunStore, cache: ResponseCache) -> None:
    """Add this invocation's cache hits and misses to the manifest's ``cache`` record.

    The record sums every invocation of the run, so a resumed run's manifest tells what the
    whole run took from the cache.
    """
    manifest = store.read_manifest()
    store.write_manifest(dataclasses.replace(manifest, cache={
        "directory": str(cache.directory),
        "hits": manifest.cache_hits + cache.hits,
        "misses": manifest.cache_misses + cache.misses}))


def record_lost_input(store: RunStore, lost: dict[str, Any] | None) -> None:
    """Add this invocation's turns that lost input to the manifest's ``warnings``.

    Summed over the run's invocations, the first note kept, so the analysis and the viewer
    can say that the run measured a model that did not see all of its input.
    """
    if lost is None:
        return
    manifest = store.read_manifest()
    warnings = dict(manifest.warnings or {})
    earlier = warnings.get("lost_input") or {"turns": 0, "first": lost["first"]}
    warnings["lost_input"] = {"turns": earlier["turns"] + lost["turns"],
                              "first": earlier["first"]}
    store.write_manifest(dataclasses.replace(manifest, warnings=warnings))
