"""Reference plans for the plan metrics: the oracle's open-loop plan for the same task and seed.

Path efficiency and similarity compare a model's plan with another planner's. The reference
here is what the oracle (``--model oracle``, a privileged search in the simulator) answers
when it plays the plan probe itself: its one script from the same start (the same arena file,
seed, pass mark and protocol), played open-loop, then the clock run out. Two sources give it,
with the same plans for the same budget:

* ``OracleReferences`` (what ``analyze --by observation`` uses by default): the oracle asked
  on demand, about a second of CPU an episode at the default budget, and cached on disk
  (``$XDG_CACHE_HOME/llm-aai/oracle-plans``). An entry is keyed by the arena file's sha256,
  the seed, the pass mark, the protocol, the oracle's budget and the source of the code that
  decides the plan (oracle, simulator, protocol, script language, arena placement), so a
  changed oracle or simulator never reads a plan it would no longer make.
* ``RunReferences`` (``analyze --reference RUN``): the plans of a plan run given as the
  reference, e.g. ``run --model oracle --prompt plan`` with the same ``--seed``, matched by
  task and seed; its arena files must be the ones the scored run played.

The oracle's script is capped at the parser's 500 steps, so on a task that needs more its
open-loop plan fails; it still serves for similarity, not for path efficiency (which needs a
reference that passed).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import logging
import os
from pathlib import Path
from typing import Protocol

import llm_aai
from llm_aai.agents.base import TurnInput
from llm_aai.agents.oracle import OracleAgent
from llm_aai.analysis.load import load_runs
from llm_aai.arena.checksum import file_sha256
from llm_aai.env import AnimalAIEnv
from llm_aai.logs.store import atomic_write_text, read_manifest
from llm_aai.oracle import DEFAULT_BUDGET
from llm_aai.plans.evaluate import first_reply, logged_script
from llm_aai.plans.metrics import ReferencePlan
from llm_aai.protocol import Episode, EpisodeProtocol
from llm_aai.script import ScriptError, parse_script
from llm_aai.settings import settings_of

log = logging.getLogger(__name__)

KEY_VERSION = 1
DECIDING_CODE = ("oracle", "sim", "protocol", "script", "arena", "agents/oracle.py")
"""The package's parts whose source decides the oracle's plan (paths below ``llm_aai/``)."""


class References(Protocol):
    """Where reference plans come from (the oracle on demand, or a reference run)."""

    def plan_for(self, *, task_id: str, seed: int, pass_mark: float, arena_path: Path,
                 protocol: EpisodeProtocol) -> ReferencePlan:
        """The reference plan of one episode (same task, seed and start)."""


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/llm-aai/oracle-plans`` (default ``~/.cache``)."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "llm-aai" / "oracle-plans"


@functools.cache
def deciding_code_sha256() -> str:
    """sha256 over the source files that decide the oracle's plan, in a stable order."""
    root = Path(llm_aai.__file__).parent
    digest = hashlib.sha256()
    for part in DECIDING_CODE:
        path = root / part
        files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
        for file in files:
            digest.update(str(file.relative_to(root)).encode())
            digest.update(file.read_bytes())
    return digest.hexdigest()


@dataclasses.dataclass(frozen=True)
class OracleOutcome:
    """The oracle's plan for one start and how it went when played open-loop.

    Attributes:
        text: its reply, a Think/Go/Turn script.
        steps: the steps its script drove before the script or the episode ended.
        passed: whether the episode (run out after the script) reached the pass mark.
        reward: the episode's return.
    """

    text: str
    steps: int
    passed: bool
    reward: float

    def reference(self) -> ReferencePlan:
        """As the plan metrics take it."""
        return ReferencePlan(parse_script(self.text), self.steps, self.passed)


def oracle_plan(arena_path: Path, *, seed: int, pass_mark: float, protocol: EpisodeProtocol,
                budget: int = DEFAULT_BUDGET) -> OracleOutcome:
    """Ask the oracle for its first script from the episode's start and play it open-loop.

    The start is the runner's (reset with ``seed``, the protocol's no-ops); the oracle agent
    is the one ``--model oracle`` plays, through its public API, so the plan is the one a
    plan run of the oracle would log for this episode.
    """
    env = AnimalAIEnv(resolution=64, backend="embedded")
    try:
        episode = Episode(env, protocol)
        episode.start(seed=seed, arena=str(arena_path), observe_last=False)
        oracle = OracleAgent(budget)
        oracle.start_episode("", seed)
        oracle.bind_world(env, pass_mark)
        reply = oracle.act(TurnInput(images=(), text=""))
        turn = episode.play(reply.text)
        if turn.decision.refused:
            raise ValueError(f"{arena_path}: the oracle's plan did not parse: "
                             f"{turn.decision.error}")
        episode.run_out()
    finally:
        env.close()
    reward = round(episode.totals.reward, 6)
    return OracleOutcome(reply.text, turn.outcome.steps, reward >= pass_mark, reward)


class OracleReferences:
    """The oracle's plans, computed on demand and cached on disk (see the module doc).

    Args:
        cache_dir: where entries are kept; None: ``default_cache_dir()``.
        budget: the oracle's search budget in simulated steps (part of the key).

    Attributes:
        computed: plans computed by this object (not found in the cache).
        cached: plans read from the cache.
    """

    def __init__(self, cache_dir: Path | None = None, budget: int = DEFAULT_BUDGET) -> None:
        if budget < 0:
            raise ValueError(f"the oracle's budget must be >= 0 steps, got {budget}")
        self.cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self.budget = int(budget)
        self.computed = 0
        self.cached = 0

    def key(self, *, arena_sha256: str, seed: int, pass_mark: float,
            protocol: EpisodeProtocol) -> str:
        """The cache key of one episode's reference plan."""
        record = {"v": KEY_VERSION, "arena": arena_sha256, "seed": int(seed),
                  "pass_mark": float(pass_mark), "protocol": dataclasses.asdict(protocol),
                  "budget": self.budget, "code": deciding_code_sha256()}
        return hashlib.sha256(json.dumps(record, sort_keys=True).encode()).hexdigest()

    def plan_for(self, *, task_id: str, seed: int, pass_mark: float, arena_path: Path,
                 protocol: EpisodeProtocol) -> ReferencePlan:
        """The oracle's plan for this episode, from the cache or computed (then stored)."""
        key = self.key(arena_sha256=file_sha256(arena_path), seed=seed, pass_mark=pass_mark,
                       protocol=protocol)
        path = self.cache_dir / key[:2] / f"{key}.json"
        outcome = self._read(path)
        if outcome is not None:
            self.cached += 1
            return outcome.reference()
        outcome = oracle_plan(Path(arena_path), seed=seed, pass_mark=pass_mark,
                              protocol=protocol, budget=self.budget)
        self.computed += 1
        entry = {**dataclasses.asdict(outcome), "task_id": task_id, "seed": int(seed),
                 "budget": self.budget}
        atomic_write_text(path, json.dumps(entry, indent=1) + "\n")
        return outcome.reference()

    @staticmethod
    def _read(path: Path) -> OracleOutcome | None:
        """A stored plan, or None when absent; an unreadable entry is computed again."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            outcome = OracleOutcome(str(data["text"]), int(data["steps"]),
                                    bool(data["passed"]), float(data["reward"]))
            outcome.reference()  # the stored script must parse
            return outcome
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError, ScriptError) as error:
            log.warning("oracle plan cache: %s unreadable (%s); computed again", path, error)
            return None


class RunReferences:
    """The plans of a plan run as references, matched by task and seed (see the module doc).

    Args:
        run_dir: a run of the plan probe (its protocol takes one script).

    Raises:
        ValueError: ``run_dir`` is not a plan run.
        RunDirectoryError: it is not a readable run directory.
    """

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = Path(run_dir)
        self.manifest = read_manifest(self.run_dir)
        scripts = settings_of(self.manifest).config.protocol.max_scripts
        if scripts != 1:
            raise ValueError(f"{self.run_dir}: a reference run must be a plan run (run "
                             f"--model oracle --prompt plan); it allowed {scripts} scripts")
        episodes = load_runs([self.run_dir], with_turns=False).episodes
        played = episodes[~episodes["infra_failure"]]
        self._episodes = {(row.task_id, int(row.seed)): row
                          for row in played.itertuples(index=False)}

    def plan_for(self, *, task_id: str, seed: int, pass_mark: float, arena_path: Path,
                 protocol: EpisodeProtocol) -> ReferencePlan:
        """The reference run's plan for the episode of ``task_id`` played with ``seed``.

        Raises:
            ValueError: the run has no such episode, played another arena file, or its plan
                did not parse.
        """
        del pass_mark, protocol  # the run's own episode says whether its plan passed
        row = self._episodes.get((task_id, int(seed)))
        if row is None:
            raise ValueError(f"reference run {self.run_dir} has no episode of {task_id} with "
                             f"seed {seed}; run it with the scored run's --seed and trials")
        played = self.manifest.arena_sha256(task_id)
        if played is not None and played != file_sha256(arena_path):
            raise ValueError(f"reference run {self.run_dir} played another arena file for "
                             f"{task_id} than {arena_path}")
        turn = first_reply(Path(row.episode_dir))
        script = logged_script(turn.commands)
        if script is None:
            raise ValueError(f"{row.episode_dir}: the reference plan did not parse")
        return ReferencePlan(script, turn.steps, bool(row.passed))
