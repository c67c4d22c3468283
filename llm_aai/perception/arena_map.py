"""The plan-then-act probe's map: the whole arena in words, in arena coordinates.

Unlike the text observation it lists every object, seen or not (the map a planner gets in
text-only spatial benchmarks): kind, centre, size and rotation, with the agent's own pose.
"""

from __future__ import annotations

from collections.abc import Sequence

from llm_aai.arena.geometry import ARENA_SIZE
from llm_aai.arena.placement import PlacedObject
from llm_aai.perception.text import placed_line, pose_line
from llm_aai.perception.words import metres
from llm_aai.sim.sight import Eye

OBJECTS_HEADER = "Objects (size given as width, height, depth before rotation):"
NO_OBJECTS = "There are no objects in the arena."


def describe_arena(eye: Eye, objects: Sequence[PlacedObject],
                   centres: Sequence[tuple[float, float, float]]) -> str:
    """The map: the arena's size, the agent's pose, then every object, in a stable order.

    Objects are sorted by their centre (z, then x), so the same arena reads the same.
    """
    lines = [f"Map of the arena: a square {metres(ARENA_SIZE)} m by {metres(ARENA_SIZE)} m, "
             "fenced on all four sides.", pose_line(eye)]
    order = sorted(range(len(objects)),
                   key=lambda i: (round(centres[i][2], 3), round(centres[i][0], 3), i))
    if order:
        lines.append(OBJECTS_HEADER)
        lines += [placed_line(objects[i], centres[i]) for i in order]
    else:
        lines.append(NO_OBJECTS)
    return "\n".join(lines)
