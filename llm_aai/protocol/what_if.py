"""What would happen if this script ran now: played on a copy of the episode, then undone.

A prediction can only be scored against a truth, and for a script the model did not send
(a counterfactual) the only truth is to play it. The embedded simulator copies and restores
its whole state exactly (``llm_aai.sim.snapshot``, about 0.2 ms), so a what-if plays the
script through the same turn loop as the live episode (``Episode.play``: the same control,
the same observation policy, the same totals so far), reads what happened, and puts the env
back. The live episode never sees it: the next real script gives the same states, frames,
rewards and logs, byte for byte, as if nothing had been asked (``tests/protocol/
test_what_if.py`` checks this over testbed tasks and both physics builds).

The env must offer ``snapshot()``, ``restore(snapshot)`` and ``in_view()``
(``llm_aai.env.AnimalAIEnv`` on the embedded backend does; the Unity player cannot copy its
world, and a what-if there raises ``NotImplementedError`` saying so).
"""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from llm_aai.logs.events import logged_events
from llm_aai.protocol.episode import Episode

__all__ = ["WhatIf", "what_if"]


@dataclass(frozen=True)
class WhatIf:
    """What a script would have done, played from the episode's current state.

    Attributes:
        script: the script as asked.
        error: why the control refused it (it would have cost the protocol's no-op steps).
        first_event: the kind of the first goal or zone it touched (``GoodGoal``,
            ``GoodGoalMulti``, ``BadGoal``, ``DeathZone``, ``hot_zone``...), or None.
        events: every goal and zone event, in order, as ``{kind, reward, step}`` (``step``
            counts the episode's AAI steps, as in the turn logs).
        done: the episode would have ended during the script.
        end_reason: how it would have ended (``good_goal``, ``death_zone``...), else None.
        health: the health after it.
        reward: the reward it would have gained.
        steps: the AAI steps it would have taken.
        position: the agent's (x, y, z) afterwards, Unity coordinates (y up).
        yaw: the agent's facing afterwards, degrees clockwise from +z.
        in_view: the objects in view afterwards, nearest first, as ``(name, distance,
            bearing)`` (``AnimalAIEnv.in_view``).

    """

    script: str
    error: str | None
    first_event: str | None
    events: tuple[Mapping[str, Any], ...]
    done: bool
    end_reason: str | None
    health: float
    reward: float
    steps: int
    position: tuple[float, float, float]
    yaw: float
    in_view: tuple[Any, ...]

    def to_json(self) -> dict[str, Any]:
        """The what-if as one JSON object (``"what_if": true`` marks it in ``play``'s output)."""
        data: dict[str, Any] = {
            "what_if": True,
            "script": self.script,
            "first_event": self.first_event,
            "done": self.done,
            "end_reason": self.end_reason,
            "health": round(self.health, 4),
            "reward": round(self.reward, 6),
            "steps": self.steps,
            "events": [event["kind"] for event in self.events],
            "position": [round(float(v), 3) for v in self.position],
            "yaw": round(float(self.yaw), 2),
            "in_view": [dataclasses.asdict(seen) for seen in self.in_view],
        }
        if self.error is not None:
            data["error"] = self.error
        return data

    def to_json_line(self) -> str:
        """The what-if as a compact JSON line."""
        return json.dumps(self.to_json(), ensure_ascii=False)


def what_if(episode: Episode, script: str) -> WhatIf:
    """Play ``script`` on a copy of ``episode``'s state and report what it did; then undo it.

    Raises:
        RuntimeError: the episode takes no more replies (it ended, or reached its cap).
        NotImplementedError: the env cannot copy its state (the Unity backend).

    """
    if not episode.wants_reply:
        raise RuntimeError("a what-if needs an episode that still takes replies")
    env: Any = episode.env
    saved = env.snapshot()
    try:
        trial = Episode(env, episode.protocol, control=copy.deepcopy(episode.control),
                        observations=episode.observations)
        trial.totals = dataclasses.replace(episode.totals)
        trial.observation = episode.observation
        turn = trial.play(script, observe=False)  # nobody looks at its frames
        seen = tuple(env.in_view())
    finally:
        env.restore(saved)
    outcome = turn.outcome
    events = logged_events(outcome.infos)
    last = outcome.infos[-1] if outcome.infos else saved.last.info
    return WhatIf(
        script=script, error=turn.decision.error,
        first_event=events[0]["kind"] if events else None, events=events,
        done=outcome.done, end_reason=_end_reason(outcome.infos) if outcome.done else None,
        health=float(outcome.health), reward=float(outcome.reward), steps=outcome.steps,
        position=tuple(float(v) for v in last["position"]), yaw=float(last["yaw"]),
        in_view=seen)


def _end_reason(infos: Sequence[Mapping[str, Any]]) -> str | None:
    return infos[-1].get("end_reason") if infos else None
