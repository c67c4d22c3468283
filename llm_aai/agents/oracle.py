"""The oracle as an agent the runner plays like any model (``--model oracle``).

A thin adapter over ``llm_aai.oracle``: on each turn it searches from the live episode's
exact state (a snapshot of the embedded simulator, restored after the search, so the
episode is untouched) and answers with a Think/Go/Turn script whose Think says what it
plans. The runner parses, plays, logs and replays that script as it does a model's.

Its privilege is the world itself: the runner hands it the env with ``bind_world`` (an
optional agent hook), from which it takes the embedded simulator. A real model sees only the
frames. It needs the embedded backend; with another one it says so.

In action control (``control="action"``) it answers each turn with one AAI action of its plan,
repeated while the plan repeats it (up to ``MAX_REPEAT``): the plan was simulated from the
episode's exact state and the world is deterministic, so playing it reply by reply takes the
states the search saw; when the plan runs out it searches again. ``per_frame=True`` is the
``oracle-frames`` ceiling: its search uses any of the 3 x 3 actions (turning while moving,
waiting), where script control limits it to what Go and Turn express.
"""

from __future__ import annotations

from collections.abc import Sequence

from llm_aai.agents.base import AgentReply, PriorTurn, TurnInput
from llm_aai.oracle.replies import repeat_of, script_reply
from llm_aai.oracle.search import DEFAULT_BUDGET, WAIT, SearchSettings, describe, plan_script
from llm_aai.protocol.action_control import MAX_REPEAT, action_reply

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
    """Plans each reply by simulating from the episode's exact state (see the module doc).

    Args:
        budget: simulated AAI steps its search may take over the whole episode.
        control: ``"script"`` (a Think/Go/Turn script per reply, the paper's) or ``"action"``
            (one action per reply, ``llm_aai.protocol.action_control``).
        per_frame: search over every AAI action, the ``oracle-frames`` ceiling (needs
            ``control="action"``: a script cannot express those actions).
    """

    name = "oracle"

    def __init__(self, budget: int = DEFAULT_BUDGET, control: str = "script",
                 per_frame: bool = False) -> None:
        if budget < 0:
            raise ValueError(f"the oracle's budget must be >= 0 steps, got {budget}")
        if control not in ("script", "action"):
            raise ValueError(f"control must be script or action, got {control!r}")
        if per_frame and control != "action":
            raise ValueError("oracle-frames acts per step: it plays --control action only "
                             "(a script cannot turn while it moves, or wait)")
        self.budget = int(budget)
        self.control = control
        self.per_frame = bool(per_frame)
        self.name = "oracle-frames" if per_frame else "oracle"
        self._sim = None
        self._pass_mark = 0.0
        self._seed = 0
        self._left = self.budget
        self._turn = 0
        self._hint: list[tuple[int, int]] | None = None
        self._queue: list[tuple[int, int]] = []

    def start_episode(self, system_prompt: str, seed: int,
                      prelude: Sequence[PriorTurn] = ()) -> None:
        """Forget the last episode; the prompt and worked example mean nothing to it."""
        del system_prompt, prelude
        self._seed = int(seed)
        self._left = self.budget
        self._turn = 0
        self._hint = None
        self._queue = []

    def bind_world(self, env, pass_mark: float) -> None:
        """Receive the episode's env (its simulator) and the pass mark to aim for."""
        self._sim = simulator_of(env)
        self._pass_mark = float(pass_mark)

    def act(self, turn: TurnInput) -> AgentReply:
        """The next reply: the first part of the best plan found from the state now."""
        del turn  # it reads the world itself
        if self._sim is None:
            raise RuntimeError("the oracle was not given its world (the runner calls "
                               "bind_world after reset)")
        if self.control == "action":
            return AgentReply(self._next_action_reply(), model=self.name)
        text, self._hint = script_reply(self._plan(self._hint))
        return AgentReply(text, model=self.name)

    def _plan(self, hint):
        settings = SearchSettings(self.budget, self.per_frame, self._seed + self._turn,
                                  self._pass_mark)
        plan = plan_script(self._sim, settings, max(self._left, 0), hint)
        self._left -= plan.searched
        self._turn += 1
        return plan

    def _next_action_reply(self) -> str:
        """One action of the plan, repeated while the plan repeats it; a new plan when empty."""
        thought = None
        if not self._queue:
            plan = self._plan(None)
            # nothing found (the budget is spent): wait for the clock
            self._queue = list(plan.actions) or [WAIT] * MAX_REPEAT
            thought = describe(plan, len(self._queue)).replace("this script takes",
                                                               "the replies take")
            thought = thought.replace(")", "").replace('"', "'")
        action = self._queue[0]
        repeat = repeat_of(self._queue)
        del self._queue[:repeat]
        return action_reply(action, repeat, thought)
