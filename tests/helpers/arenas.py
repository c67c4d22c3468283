"""Small hand-made arenas: YAML files with a goal ahead of the agent, and placed arenas.

The YAML is the testbed's own format, read by the real arena loader; the placed arenas
(``arena``, ``obj``) skip placement for simulator tests that need exact positions.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from llm_aai.arena.model import Arena
from llm_aai.arena.objects import lookup
from llm_aai.arena.placement import PlacedArena, PlacedObject

__all__ = ["GOAL_AHEAD", "arena", "goal_ahead", "obj", "write_arena"]


def goal_ahead(*, t: int = 250, pass_mark: float | None = None,
               agent: tuple[float, float] = (20, 10), goal: tuple[float, float] = (20, 16),
               goal_size: float = 1, blackouts: str | None = None,
               time_key: str = "t") -> str:
    """An arena file's text: the agent facing +z at ``agent`` and a green goal at ``goal``.

    Args:
        t: the time limit in steps.
        pass_mark: the arena's pass mark; None leaves the key out.
        agent: the agent's (x, z).
        goal: the goal's (x, z).
        goal_size: the goal's diameter (m).
        blackouts: the ``blackouts`` list as written (``"[-3]"``); None leaves it out.
        time_key: ``t`` or the older ``timeLimit`` (some clients write that).
    """
    lines = ["!ArenaConfig", "arenas:", "  0: !Arena", f"    {time_key}: {t}"]
    if pass_mark is not None:
        lines.append(f"    pass_mark: {pass_mark}")
    if blackouts is not None:
        lines.append(f"    blackouts: {blackouts}")
    lines += [
        "    items:",
        "    - !Item",
        "      name: Agent",
        f"      positions: [!Vector3 {{x: {agent[0]}, y: 0, z: {agent[1]}}}]",
        "      rotations: [0]",
        "    - !Item",
        "      name: GoodGoal",
        f"      positions: [!Vector3 {{x: {goal[0]}, y: 0, z: {goal[1]}}}]",
        f"      sizes: [!Vector3 {{x: {goal_size}, y: {goal_size}, z: {goal_size}}}]",
    ]
    return "\n".join(lines) + "\n"


GOAL_AHEAD = goal_ahead(goal_size=2, time_key="timeLimit")
"""An agent facing a green ball 6 m ahead: a few forward steps reach it."""


def write_arena(folder: Path, text: str, name: str = "arena.yml") -> Path:
    """Write an arena file (dedented) into ``folder`` and return its path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


def obj(name, position, size, yaw=0.0, color=None, lift=0.01):
    """A placed object with its bottom at y + lift (what the placer produces)."""
    spec = lookup(name)
    x, y, z = position
    if name in ("DeathZone", "HotZone"):
        bottom = -0.15 - size[1] / 2
    else:
        bottom = y + lift
    return PlacedObject(spec, (x, bottom, z), tuple(size), yaw + spec.yaw_offset,
                        color or spec.color, 0, 0)


def arena(*objects, agent=(20.0, 0.0, 20.0), yaw=0.0, t=0, blackouts=()):
    """A placed arena of ``objects`` with the agent at ``agent`` facing ``yaw``."""
    agent_obj = PlacedObject(lookup("Agent"), (agent[0], agent[1] + 0.01, agent[2]),
                             (1.0, 1.0, 1.0), yaw, (0.5, 0.5, 0.5), 0, 0)
    return PlacedArena(Arena(time_limit=t, blackouts=tuple(blackouts)), agent_obj,
                       tuple(objects))
