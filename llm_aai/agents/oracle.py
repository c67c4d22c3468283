"""The oracle as an agent the runner plays like any model (``--model oracle``).

A thin adapter over ``llm_aai.oracle``: on each turn it searches from the live episode's
exact state (a snapshot of the embedded simulator, restored after the search, so the
episode is untouched) and answers with a Think/Go/Turn script whose Think says what it
plans. The runner parses, plays, logs and replays that script as it does a model's.

Its privilege is the world itself: the runner hands it the env with ``bind_world`` (an
optional agent hook), from which it takes the embedded simulator. A real model sees only the
frames. It needs the embedded backend; with another one it says so.
"""

from __future__ import annotations

from collections.abc import Sequence

from llm_aai.agents.base import AgentReply, PriorTurn, TurnInput
from llm_aai.oracle.search import (
    DEFAULT_BUDGET,
    MAX_SCRIPT_STEPS,
    SearchSettings,
    describe,
    plan_script,
    to_script,
)
from llm_aai.script import format_script

__all__ = ["OracleAgent"]


def simulator_of(env):
    """The embedded simulator behind a gymnasium env of this package (privileged access)."""
    backend = getattr(getattr(env, "unwrapped", env), "_backend", None)
    simulator = getattr(backend, "_sim", None)
    if simulator is None or not hasattr(simulator, "snapshot"):
        raise RuntimeError("the oracle plans in the embedded simulator's world; run it with "
                           "--backend embedded")
    return simulator


class OracleAgent:
    """Plans each script by simulating from the episode's exact state (see the module doc).

    Args:
        budget: simulated AAI steps its search may take over the whole episode.
    """

    name = "oracle"

    def __init__(self, budget: int = DEFAULT_BUDGET) -> None:
        if budget < 0:
            raise ValueError(f"the oracle's budget must be >= 0 steps, got {budget}")
        self.budget = int(budget)
        self._sim = None
        self._pass_mark = 0.0
        self._seed = 0
        self._left = self.budget
        self._turn = 0
        self._hint: list[tuple[int, int]] | None = None

    def start_episode(self, system_prompt: str, seed: int,
                      prelude: Sequence[PriorTurn] = ()) -> None:
        """Forget the last episode; the prompt and worked example mean nothing to it."""
        del system_prompt, prelude
        self._seed = int(seed)
        self._left = self.budget
        self._turn = 0
        self._hint = None

    def bind_world(self, env, pass_mark: float) -> None:
        """Receive the episode's env (its simulator) and the pass mark to aim for."""
        self._sim = simulator_of(env)
        self._pass_mark = float(pass_mark)

    def act(self, turn: TurnInput) -> AgentReply:
        """The next script: the first part of the best plan found from the state now."""
        del turn  # it reads the world itself
        if self._sim is None:
            raise RuntimeError("the oracle was not given its world (the runner calls "
                               "bind_world after reset)")
        settings = SearchSettings(self.budget, False, self._seed + self._turn, self._pass_mark)
        plan = plan_script(self._sim, settings, max(self._left, 0), self._hint)
        self._left -= plan.searched
        self._turn += 1
        chunk = plan.actions[:MAX_SCRIPT_STEPS]
        self._hint = plan.actions[len(chunk):] or None
        script = to_script(chunk, describe(plan, len(chunk)))
        return AgentReply(format_script(script), model="oracle")
