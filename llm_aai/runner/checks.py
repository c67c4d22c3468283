"""The checks a run passes before it starts or resumes, each a ``RunError`` saying what to fix.

They run before anything is written, so a run that could not play leaves nothing behind: the
backend launched once, an observation the backend can describe, the task a replayed episode
was played on; and on resume, the arena files, the prompt and (for a run another scheduler
continues) the settings the run started with, and the routing settings its manifest names,
which a resume takes only where this user's mark vouches for them (``routing``).
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from llm_aai.arena import file_sha256
from llm_aai.env.backends.unity import UnityUnavailable
from llm_aai.logs.schema import RunManifest
from llm_aai.logs.store import RESULT, read_result
from llm_aai.perception.observer import check_observation
from llm_aai.prompts import Prompt, prompt_spec
from llm_aai.runner.errors import RunError
from llm_aai.runner.routing import ROUTING, unvouched
from llm_aai.runner.run_env import make_env
from llm_aai.settings import ResumeOverrides, RunConfig


def check_arenas_unchanged(run_dir: Path, manifest: RunManifest,
                           arena_paths: dict[str, Path]) -> None:
    """Refuse to resume on arena files that differ from the ones the run started with."""
    changed = [f"{task_id} ({path})" for task_id, path in arena_paths.items()
               if (recorded := manifest.arena_sha256(task_id)) is not None
               and file_sha256(path) != recorded]
    if changed:
        raise RunError(f"arena files differ from those {run_dir} started with (checksums in its "
                       f"manifest.json): {', '.join(changed)}; resume with the original "
                       "--arenas-dir, or start a new run")


def check_prompt_unchanged(run_dir: Path, manifest: RunManifest, prompt: Prompt) -> None:
    """Refuse to resume with a prompt, turn messages or worked example the run did not use.

    The prompt files live in the package, so a ``git pull`` or an edit between two
    invocations would otherwise change what the model is told halfway through a run.
    """
    recorded = manifest.prompt
    current = prompt.manifest()

    def example_hash(record: dict[str, Any]) -> str | None:
        return (record.get("example") or {}).get("sha256")

    hashes = {"the system prompt": (recorded.get("sha256"), current["sha256"])}
    if "turn_messages_sha256" in recorded:  # runs from before it was recorded lack it
        hashes["the turn messages"] = (recorded["turn_messages_sha256"],
                                       current["turn_messages_sha256"])
    hashes["the worked example"] = (example_hash(recorded), example_hash(current))
    changed = [what for what, (then, now) in hashes.items() if then != now]
    if changed:
        raise RunError(f"{' and '.join(changed)} of prompt {current['name']!r} differ from what "
                       f"{run_dir} started with (hashes in its manifest.json); resume with the "
                       "llm-aai version that started it, or start a new run")


def check_routing_vouched(run_dir: Path, manifest: RunManifest, recorded: RunConfig,
                          resumed: RunConfig, overrides: ResumeOverrides) -> None:
    """Refuse to resume with a routing value taken from a manifest this user cannot vouch for.

    ``recorded`` is the manifest's config, ``resumed`` the one the resume would play. A
    routing value (the model's endpoint, the Ray cluster, the Unity build) still taken from
    the manifest must carry this user's mark; one given again on the command line is the
    user's own choice, and one the overrides drop (``--executor local``) is not used.
    """
    values, reason = unvouched(run_dir, manifest, recorded)
    taken = {dotted: value for dotted, value in values.items()
             if getattr(overrides, ROUTING[dotted][0]) is None
             and resumed.value_of(dotted) is not None}
    if not taken:
        return
    named = " and ".join(f"{ROUTING[dotted][1]} {_shown(value)}" for dotted, value in taken.items())
    again = " ".join(f"{ROUTING[dotted][1]} {_shown(value)}" for dotted, value in taken.items())
    raise RunError(f"{run_dir}/manifest.json names {named}, which this user's mark does not "
                   f"vouch for ({reason}); a run folder from elsewhere could send your API key, "
                   f"the job or a program there: to resume with what it names, give {again} "
                   "again (or other values)")


def _shown(value: str) -> str:
    """A recorded value as a shell word, or escaped if it holds a control character."""
    return shlex.quote(value) if value.isprintable() else repr(value)


def check_same_run(run_dir: Path, recorded: RunManifest, manifest: RunManifest) -> None:
    """Refuse to continue a run with other settings than the ones it was opened with.

    ``manifest`` is the one the run would be opened with now: its resolved run (settings,
    tasks), its agent and its seeds must be the recorded ones, or one run would hold episodes
    of two experiments. What another framework's calls name in ``may_change`` (how the calls
    are made: connections, timeouts, its version) may differ.
    """
    then, now = _as_json(recorded.to_dict()), _as_json(manifest.to_dict())
    _leave_out_what_may_change(then.get("agent"), now.get("agent"))
    for name in ("run", "agent", "seeds"):
        difference = _first_difference(then.get(name), now.get(name), name)
        if difference is not None:
            raise RunError(f"{run_dir} holds a run of other settings ({difference}); give "
                           "another run directory, or the settings it was opened with")


def _leave_out_what_may_change(then: Any, now: Any) -> None:
    """Remove from both agent records the fields of ``calls`` either names in ``may_change``.

    Both lists count: a version of the framework that adds a field to its list may continue
    a run that recorded an older one.
    """
    records = [agent["calls"] for agent in (then, now)
               if isinstance(agent, dict) and isinstance(agent.get("calls"), dict)]
    dotted = {path for calls in records for path in calls.pop("may_change", None) or []}
    for calls in records:
        for path in dotted:
            *parents, name = path.split(".")
            record = calls
            for parent in parents:
                record = record.get(parent)
                if not isinstance(record, dict):
                    break
            else:
                record.pop(name, None)


_ABSENT = object()


def _as_json(data: dict[str, Any]) -> dict[str, Any]:
    return json.loads(json.dumps(data))


def _first_difference(then: Any, now: Any, where: str) -> str | None:
    """The first field (dotted) whose recorded value differs from today's, said both ways."""
    if isinstance(then, dict) and isinstance(now, dict):
        for key in sorted(set(then) | set(now)):
            found = _first_difference(then.get(key, _ABSENT), now.get(key, _ABSENT),
                                      f"{where}.{key}")
            if found is not None:
                return found
        return None
    if then == now:
        return None

    def shown(value: Any) -> str:
        return "absent" if value is _ABSENT else json.dumps(value)

    return f"{where} is {shown(then)} there, {shown(now)} now"


def check_backend(config: RunConfig) -> None:
    """Build one environment, and launch its player once, before the run directory exists.

    A missing Unity package or build, a file that cannot run, a player that crashes or a busy
    port is then a one-line error that leaves nothing behind.
    """
    try:
        env = make_env(config)
        try:
            check = getattr(env.backend, "check", None)
            if check is not None:
                check()
        finally:
            env.close()
    except UnityUnavailable as error:
        raise RunError(str(error)) from error


def check_observation_backend(config: RunConfig) -> None:
    """Text observations and the arena's map need a backend that can describe the world."""
    try:
        check_observation(config.observation, config.perspective, config.backend,
                          arena_map=prompt_spec(config.prompt).arena_map)
    except ValueError as error:
        raise RunError(str(error)) from error


def check_replay_task(source: Path, selected: list[str]) -> int | None:
    """A logged episode's scripts mean something only in the world they were played in.

    A sealed episode names its task and its seed: the task must be the one selected, and the
    seed is returned for every replayed episode to use (random placements and colours
    depend on it). A scripts file or an unfinished episode names neither, and is replayed
    wherever, and with whatever seed, the run gives it.
    """
    if not (source / RESULT).is_file():
        return None
    logged = read_result(source)
    recorded = logged.task_id
    if set(selected) != {recorded}:
        shown = ", ".join(selected[:4]) + (f" and {len(selected) - 4} more" if len(selected) > 4
                                           else "")
        raise RunError(f"--replay-from {source} was played on task {recorded}, but this run "
                       f"selects {shown}; add --tasks {recorded}")
    return logged.seed
