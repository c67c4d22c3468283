"""A seeded random agent: the floor any other agent should beat."""

from __future__ import annotations

import random
from collections.abc import Sequence

from llm_aai.agents.base import AgentReply, PriorTurn, TurnInput
from llm_aai.protocol.action_control import ACTION_NAMES, MAX_REPEAT, action_reply
from llm_aai.script import DEGREES_PER_STEP, Command, Go, Script, Turn, format_script

__all__ = ["RandomAgent"]


class RandomAgent:
    """Sends one to three random Go/Turn commands per turn, reproducibly for a seed.

    Args:
        max_go: largest |n| in Go(n).
        max_commands: most commands per script.
        name: agent name in logs.
        control: ``"script"`` (random scripts) or ``"action"`` (a random action, repeated 1 to
            ``MAX_REPEAT`` steps, per reply).

    """

    def __init__(self, max_go: int = 20, max_commands: int = 3, name: str = "random",
                 control: str = "script") -> None:
        if max_go < 1 or max_commands < 1:
            raise ValueError("max_go and max_commands must be >= 1")
        if control not in ("script", "action"):
            raise ValueError(f"control must be script or action, got {control!r}")
        self.control = control
        self.max_go = max_go
        self.max_commands = max_commands
        self.name = name
        self._rng = random.Random(0)

    def start_episode(self, system_prompt: str, seed: int,
                      prelude: Sequence[PriorTurn] = ()) -> None:
        """Reseed, so the same seed gives the same scripts.

        The prompt and ``prelude`` are ignored.
        """
        self._rng = random.Random(seed)

    def act(self, turn: TurnInput) -> AgentReply:
        """Return a random script (or action); the observation is ignored."""
        if self.control == "action":
            action = self._rng.choice(list(ACTION_NAMES.values()))
            return AgentReply(text=action_reply(action, self._rng.randint(1, MAX_REPEAT)),
                              model=self.name)
        commands: list[Command] = []
        for _ in range(self._rng.randint(1, self.max_commands)):
            if self._rng.random() < 0.5:
                commands.append(Go(self._rng.choice([-1, 1, 1, 1]) *
                                   self._rng.randint(1, self.max_go)))
            else:
                steps = self._rng.randint(1, 180 // DEGREES_PER_STEP)
                commands.append(Turn(self._rng.choice((-1, 1)) * steps * DEGREES_PER_STEP))
        return AgentReply(text=format_script(Script(tuple(commands))), model=self.name)
