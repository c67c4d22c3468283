"""The benchmarks' printed result: one line per figure, its value and the goal it is held to."""

from __future__ import annotations


def print_goal_table(rows: list[tuple[str, str, str]]) -> None:
    """Print ``(figure, value, goal)`` rows with the names and values aligned."""
    width = max(len(name) for name, _, _ in rows)
    for name, value, goal in rows:
        print(f"{name:<{width}}  {value:>8}  {goal}".rstrip())
