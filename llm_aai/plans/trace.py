"""Drive a plan open-loop in the simulator and record what each step touched and triggered.

The plan metrics (``llm_aai.plans.metrics``) need per-step facts a run's log does not keep
(which walls the agent bumped); this plays frame actions in a ``Simulator`` directly, with
no rendering, and stops where the episode ends, as an open-loop plan would.
"""

from __future__ import annotations

from collections.abc import Sequence

from llm_aai.arena.objects import Kind
from llm_aai.plans.metrics import TraceStep
from llm_aai.sim import Simulator

_TOUCH_WORDS = {Kind.WALL: "wall", Kind.RAMP: "wall", Kind.TUNNEL: "wall",
                Kind.U_BLOCK: "wall", Kind.BOX: "box", Kind.GOAL: "ball"}


def touched_kinds(sim: Simulator, indices: frozenset[int], objects) -> frozenset[str]:
    """The metrics' words for the objects of ``indices`` (-1 is the fence); zones are skipped."""
    words = {"fence" if i == -1 else _TOUCH_WORDS.get(objects[i].spec.kind) for i in indices}
    return frozenset(words - {None})


def trace_actions(sim: Simulator, objects, actions: Sequence[tuple[int, int]]) -> list[TraceStep]:
    """Step a loaded ``sim`` through ``actions`` until they or the episode end.

    Args:
        sim: a simulator with the arena loaded (and any no-op start already stepped).
        objects: the placed objects of that arena (``PlacedArena.objects``).
        actions: AAI actions ``(move, turn)``.
    """
    trace = []
    for move, turn in actions:
        if sim.done:
            break
        result = sim.step(move, turn)
        trace.append(TraceStep(frozenset(e.kind for e in result.events),
                               touched_kinds(sim, sim.touched, objects)))
    return trace
