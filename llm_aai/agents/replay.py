"""Re-issue the scripts of an earlier episode, in order.

Replaying a logged episode on the same arena and seed must reproduce it (the simulator
is deterministic), which makes this agent a regression test of the whole pipeline.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from llm_aai.agents.base import AgentReply, PriorTurn, TurnInput

__all__ = ["ReplayAgent", "ReplayExhausted"]


class ReplayExhausted(RuntimeError):
    """The episode asked for more scripts than were recorded: the replay diverged."""


class ReplayAgent:
    """Returns the given script texts one per turn, verbatim (invalid ones included).

    Args:
        scripts: the reply texts, in the order they were sent.
        name: agent name in logs.

    """

    def __init__(self, scripts: Iterable[str], name: str = "replay") -> None:
        self.scripts = tuple(scripts)
        for index, script in enumerate(self.scripts):
            if not isinstance(script, str):
                raise TypeError(f"script {index} is {type(script).__name__}, not str")
        self.name = name
        self._next = 0

    def start_episode(self, system_prompt: str, seed: int,
                      prelude: Sequence[PriorTurn] = ()) -> None:
        """Rewind to the first script.

        The prompt and ``prelude`` are ignored.
        """
        self._next = 0

    def act(self, turn: TurnInput) -> AgentReply:
        """Return the next recorded script.

        Raises:
            ReplayExhausted: every recorded script has been used.

        """
        if self._next >= len(self.scripts):
            raise ReplayExhausted(
                f"replay has only {len(self.scripts)} scripts but the episode asked for "
                f"script {self._next + 1}; the replayed episode diverged from the recording")
        text = self.scripts[self._next]
        self._next += 1
        return AgentReply(text=text, model=self.name)
