"""``llm_aai/testbed``: the Inspect task, its solver (one episode a sample) and its scorer.

Every setting a run takes is a task argument (``-T name=value``) and becomes a ``RunConfig``;
the run itself is opened with the runner's ``open_run`` on the first sample, when the model
is known, so its directory holds the manifest, episode logs, results and summary of a
``python -m llm_aai.run`` run (``analyze``, ``replay`` and ``view`` read it). Trials are
Inspect epochs: sample = task, epoch = trial.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import weakref
from collections import defaultdict
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.hooks import Hooks, RunEnd, hooks
from inspect_ai.log._samples import sample_active  # no public accessor of the eval's run id
from inspect_ai.model import Model, get_model
from inspect_ai.model._generate_config import active_generate_config  # no public accessor
from inspect_ai.model._model import active_model  # get_model() would make one from the env
from inspect_ai.scorer import (
    Metric,
    SampleScore,
    Score,
    Scorer,
    Target,
    metric,
    scorer,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver

from llm_aai.agents.llm import LLMAgent
from llm_aai.agents.registry import AgentSpec
from llm_aai.analysis.stats import bootstrap_mean_interval
from llm_aai.frames import FrameFormat
from llm_aai.inspect_eval.client import InspectClient
from llm_aai.inspect_eval.tokenizer import check_encoding_loads
from llm_aai.protocol import EpisodeProtocol
from llm_aai.runner import RESULTS_DIR, RunConfig, RunError, default_run_id
from llm_aai.runner.app import OpenRun, open_run
from llm_aai.runner.plan import resolve_tasks_and_prompt
from llm_aai.runner.presets import fill_presets
from llm_aai.settings.config import ConfigError

__all__ = ["episode_scorer", "level_pass_rates", "play_episode", "testbed"]

RESULT_KEY = "llm_aai"
"""The sample metadata key holding the episode's result and where it was logged."""


@task
def testbed(tasks: str | None = None, level: str | None = None,
            arenas_dir: str | None = None, prompt: str = "react", control: str = "script",
            observation: str = "image", perspective: str = "egocentric",
            max_scripts: int | None = EpisodeProtocol.max_scripts,
            physics_build: str = RunConfig.physics_build, resolution: int = 512,
            script_mode: str = "strict", frames: str = FrameFormat.kind,
            observe_every: int | None = None, trials: int = 1, seed: int = 0,
            full_testbed: bool = False, run_dir: str | None = None,
            max_replies: int | None = None) -> Task:
    """The LLM-AAI testbed on the embedded simulator, one sample per task.

    Args:
        tasks: comma-separated task ids (``01-04-03,03-01-02``; Inspect's ``-T`` passes a list
            for a value with commas, taken too); None for all.
        level: levels, e.g. ``1-3``, ``1,5`` or ``3`` (a number or a list from ``-T``, taken
            too); None for all.
        arenas_dir: folder of the testbed's arena YAMLs; None: ``$LLM_AAI_ARENAS`` or the cache.
        prompt: ``react`` (experiment 1), ``icl`` (experiment 2) or a prompt file.
        control: ``script`` (the paper's) or ``action`` (one action per reply; then replies
            are capped by ``max_replies``, not ``max_scripts``).
        observation: ``image``, ``text`` or ``both``.
        perspective: a text observation's frame of reference (egocentric or allocentric).
        max_scripts: scripts per episode (the paper's 30); with ``control=action`` unused.
        max_replies: replies per episode; needed with ``control=action`` (as ``--max-replies``
            is on the command line).
        physics_build: the Animal-AI build whose physics the simulator follows.
        resolution: square frame size in pixels.
        script_mode: ``strict`` or ``lenient``.
        frames: ``jpeg`` (the paper's) or ``png``.
        observe_every: show a frame every N steps of a reply as well as the last one.
        trials: episodes per task: the task's epochs.
        seed: the run seed each episode's seed derives from (with the task and the trial).
        full_testbed: select from all 900 tasks instead of the 40-task subset.
        run_dir: where the run is written in the project's log schema; None:
            ``results/<time>_inspect-<model>``.

    """
    tasks, level = _selection("tasks", tasks), _selection("level", level)
    _require("seed", seed, int)
    _require("trials", trials, int)
    _require("full_testbed", full_testbed, bool)
    values = {
        "model": "inspect", "level": level, "tasks": tasks, "full_testbed": full_testbed,
        "trials": trials, "seed": seed, "physics_build": physics_build,
        "resolution": resolution, "frames.kind": frames, "prompt": prompt,
        "script_mode": script_mode, "protocol.max_scripts": max_scripts,
        "protocol.max_replies": max_replies, "modes.control": control,
        "modes.observe_every": observe_every,
        "arenas_dir": Path(arenas_dir) if arenas_dir else None, "observation": observation,
        "perspective": perspective}
    # as the command line does: a choice's defaults (action control: no script cap) fill the
    # settings left at theirs
    given = {path for path, value in values.items() if value != _DEFAULTS.value_of(path)}
    fill_presets(values, given)
    config = RunConfig.from_values(values)
    # the checks open_run makes before anything is written (the prompt, the observation and
    # its perspective, every arena file), made now: a typo fails `inspect eval` at once, not
    # at its first sample
    _, selected, _, _ = resolve_tasks_and_prompt(config)
    _check_tokenizer()
    dataset = MemoryDataset([Sample(input=f"Animal-AI testbed task {t.task_id}", id=t.task_id,
                                    metadata={"task_id": t.task_id, "level": t.level})
                             for t in selected], name="llm-aai-testbed")
    return Task(dataset=dataset, solver=play_episode(config, run_dir),
                scorer=episode_scorer(), epochs=Epochs(trials, "mean"))


def _check_tokenizer() -> None:
    """Offline, fail as the task is made if the model being evaluated cannot count tokens.

    ``inspect eval`` makes the task with the model active; ``mockllm`` counts each call's
    tokens with tiktoken, which offline with no cached encoding failed the first sample as
    an 80-line traceback (exit status 0). A task made before an eval (from Python) has no
    active model: ``InspectClient`` says the same when a call meets the failure.
    """
    model = active_model()
    if model is not None and str(model).startswith("mockllm/"):
        check_encoding_loads()


_DEFAULTS = RunConfig(model="inspect")
"""The settings a task argument left at its default has (its preset may fill it)."""


def _selection(name: str, value: Any) -> str | None:
    """A ``tasks`` or ``level`` argument as the run's text.

    Inspect's ``-T`` turns ``3`` into an int and ``1,5`` into a list.
    """
    if value is None or isinstance(value, str):
        return value
    parts = value if isinstance(value, list | tuple) else [value]
    if not parts or not all(isinstance(part, str | int) and not isinstance(part, bool)
                            for part in parts):
        raise ConfigError(name, f"must be text like '1-3' or '01-04-03,03-01-02', got {value!r}")
    return ",".join(str(part) for part in parts)


def _require(name: str, value: Any, kind: type) -> None:
    """Refuse a task argument of the wrong type (``-T seed=abc`` arrives as text)."""
    if not isinstance(value, kind) or kind is int and isinstance(value, bool):
        raise ConfigError(name, f"must be {'true or false' if kind is bool else 'an integer'}, "
                          f"got {value!r}")


class _LazyRun:
    """One run per model, opened by its first sample (the model names it), shared by its others.

    An eval of several models (``--model a,b``) gives each its own run: their episodes have
    the same ids, and one run's folders hold one model's episodes. A ``run_dir`` given is
    continued if it holds this run already (``eval-retry``, or the same eval again): its
    finished episodes are kept and an unfinished one is set aside and played again. Each run
    holds its lock while the evals playing in it last (``_ReleaseRuns`` closes it when the
    last of them ends): two evals of one process (``eval_async`` twice, with one task or two)
    each keep their runs open until they end.
    """

    def __init__(self, config: RunConfig, run_dir: str | None):
        self._config = config
        self._run_dir = run_dir
        self._runs: dict[str, OpenRun] = {}
        self._evals: dict[str, set[str | None]] = defaultdict(set)
        """Per model, the evals (their run ids) that play in its run."""
        self._lock = anyio.Lock()
        _LAZY_RUNS.add(self)

    async def get(self, model: Model) -> OpenRun:
        model_name = str(model)
        async with self._lock:
            if self._run_dir and self._runs and model_name not in self._runs:
                raise RunError(
                    f"run_dir {self._run_dir} holds the run of {next(iter(self._runs))}; "
                    f"{model_name} needs its own: evaluate each model with its own -T "
                    "run_dir, or leave run_dir out (each model then gets "
                    "results/<time>_inspect-<model>)")
            opened = self._runs.get(model_name)
            if opened is None or opened.closed:
                calls = _calls(model)  # here: the eval's config is the event loop's
                self._runs[model_name] = await anyio.to_thread.run_sync(
                    lambda: self._open(model_name, calls, opened))
            self._evals[model_name].add(_eval_run())
            return self._runs[model_name]

    def _open(self, model_name: str, calls: dict[str, Any],
              earlier: OpenRun | None) -> OpenRun:
        config = dataclasses.replace(self._config, model=model_name)
        run_dir = (earlier.run_dir if earlier is not None else Path(self._run_dir)
                   if self._run_dir else RESULTS_DIR / default_run_id(f"inspect-{model_name}"))
        agent = AgentSpec(model_name, "inspect", {}, _no_factory)
        return open_run(config, run_dir, agent=agent, calls=calls,
                        resume=earlier is not None or self._run_dir is not None)

    def release(self, eval_run: str) -> None:
        """The eval ``eval_run`` ended: close the runs no other eval plays in, and their locks.

        A run opened where the eval's id was unknown is released by any eval's end.
        """
        for model_name, opened in self._runs.items():
            evals = self._evals[model_name]
            evals -= {eval_run, None}
            if not evals and not opened.busy:
                opened.close()


_LAZY_RUNS: weakref.WeakSet[_LazyRun] = weakref.WeakSet()
"""The task's runs in this process, for ``_ReleaseRuns``."""


@hooks(name="run_locks",
       description="releases the run directories of llm_aai/testbed when an eval ends")
class _ReleaseRuns(Hooks):
    """Release each run's lock when the evals playing in it end (``eval``, ``eval_retry``).

    Inspect tells a task nothing when its eval ends; without this a run would stay locked
    until the process exits, and an ``eval_retry`` from the same process (a notebook) would
    find it held.
    """

    async def on_run_end(self, data: RunEnd) -> None:
        """Close the runs of the eval that ended that no other eval plays in."""
        for lazy in list(_LAZY_RUNS):
            lazy.release(data.run_id)


def _eval_run() -> str | None:
    """The id of the eval playing the current sample, which ``RunEnd`` names when it ends."""
    active = sample_active()
    return active.run_id if active is not None else None


_HOW_CALLS_ARE_MADE = ("max_retries", "timeout", "attempt_timeout", "stream_idle_timeout",
                       "max_connections", "adaptive_connections", "batch", "cache",
                       "cache_prompt")
"""The ``GenerateConfig`` fields that say how the calls are made, not what the model answers.

A retry may change them: ``eval-retry --max-connections 2`` is the answer to rate limits, and
``eval_set`` lowers the connections on each retry. Inspect leaves the same fields out of a
task's identity when ``eval_set`` decides whether a log is the task's.
"""


def _calls(model: Model) -> dict[str, Any]:
    """What Inspect calls the sample's model with, for the run's manifest.

    Its ``GenerateConfig`` as ``Model.generate`` resolves it for the eval's model: the model's
    own (``get_model(config=...)``) merged with the eval's (``--temperature``, the task's
    ``config``); a field left out takes the provider's default. ``may_change`` names what a
    continued run may call the model with otherwise: ``inspect_ai``'s version and the fields
    of ``_HOW_CALLS_ARE_MADE``.
    """
    config = model.config.merge(active_generate_config())
    return {"by": "inspect_ai", "inspect_ai": importlib.metadata.version("inspect_ai"),
            "model": str(model),
            "generate_config": config.model_dump(mode="json", exclude_none=True),
            "may_change": ["inspect_ai",
                           *(f"generate_config.{name}" for name in _HOW_CALLS_ARE_MADE)]}


def _no_factory(**_: Any):
    raise RuntimeError("an Inspect run's agents are made per sample by its solver")


@solver
def play_episode(config: RunConfig, run_dir: str | None = None) -> Solver:
    """Play the sample's task (trial = epoch) with Inspect's model, through the runner.

    The runner's ``EpisodeRunner`` drives ``protocol.Episode`` and builds every message as
    ``python -m llm_aai.run`` does (``LLMAgent``); only the model call goes to Inspect. An
    episode sealed already (a continued ``run_dir`` holds it, or a retried sample played it)
    is scored from its result, not played again.
    """
    run = _LazyRun(config, run_dir)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        model = get_model()
        opened = await run.get(model)
        task_id = state.metadata["task_id"]
        result = opened.finished(task_id, state.epoch)
        # sealed before (a run_dir continued, or this sample retried): not played again
        earlier = result is not None
        if result is None:
            try:
                spec = opened.spec(task_id, state.epoch)
            except RunError as error:
                if state.epoch <= opened.config.trials:
                    raise
                # `--epochs N` beyond the task's trials
                raise RunError(f"{error}; give the trials as -T trials=N (the task sets its "
                               "epochs from them) rather than --epochs") from error
            agent = LLMAgent(InspectClient(model, state.messages), name=str(model))
            result = await anyio.to_thread.run_sync(opened.play, spec, agent)
        state.metadata[RESULT_KEY] = {
            "result": dataclasses.asdict(result), "run_dir": str(opened.run_dir),
            "episode_id": result.episode_id, "played_before": earlier}
        state.completed = True
        return state

    return solve


@metric
def level_pass_rates() -> Metric:
    """Pass rate and mean reward, overall and per level, with 95% task-bootstrap intervals.

    Inspect reduces a task's epochs (its trials) to their mean first, so each value here is
    one task's: resampling them is a cluster bootstrap that respects repeated trials.
    """

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        by_level: dict[str, list[dict[str, float]]] = defaultdict(list)
        everything = []
        for sample in scores:
            value = sample.score.value
            level = (sample.sample_metadata or {}).get("level")
            everything.append(value)
            by_level[f"level_{level}"].append(value)
        out: dict[str, float] = {}
        if not everything:
            return out
        for name, values in [("all", everything), *sorted(by_level.items())]:
            passed = [float(v["passed"]) for v in values]
            low, high = bootstrap_mean_interval(passed)
            out[f"{name}_pass_rate"] = sum(passed) / len(passed)
            out[f"{name}_pass_low"], out[f"{name}_pass_high"] = low, high
            out[f"{name}_reward"] = sum(float(v["reward"]) for v in values) / len(values)
        return out

    return compute


@scorer(metrics=[level_pass_rates()])
def episode_scorer() -> Scorer:
    """Passed (reward at or above the task's pass mark) and the episode's reward."""

    async def score(state: TaskState, target: Target) -> Score:
        logged = state.metadata.get(RESULT_KEY)
        if logged is None:  # Inspect scores a sample its limits stopped mid-episode too
            raise RuntimeError(
                f"task {state.metadata.get('task_id')} trial {state.epoch}: the episode did "
                "not finish (Inspect stopped the sample: a time, token or message limit?), so "
                "there is no result to score; its turns so far are in the run's episode folder")
        result = logged["result"]
        before = (" (played before this attempt, by an earlier eval into this run_dir or an "
                  "earlier try of the sample: its conversation is in the run's episode folder)"
                  if logged.get("played_before") else "")
        return Score(value={"passed": float(result["passed"]), "reward": result["reward"]},
                     explanation=(f"reward {result['reward']:.3f} vs pass mark "
                                  f"{result['pass_mark']:.3f}; {result['scripts_used']} "
                                  f"scripts, final health {result['final_health']}, ended: "
                                  f"{result['end_reason']}{before}"),
                     metadata={"level": result["level"], **logged})

    return score
