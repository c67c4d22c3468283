"""Typed commands of the script language and the frame actions they stand for.

A script is a sequence of ``Think``, ``Go`` and ``Turn`` commands. Only ``Go`` and ``Turn``
move the agent; ``Think`` carries the model's reasoning so that it can be logged next to the
actions it led to. Each movement command expands to a run of identical AAI actions, one per
environment step, in AAI's two-branch encoding ``(move, turn)``:

* move: 0 none, 1 forward, 2 backward;
* turn: 0 none, 1 right (clockwise seen from above), 2 left.

``Turn(d)`` is ``trunc(|d| / 6)`` steps because one AAI step (3 physics frames at 2 degrees
each) rotates the agent by 6 degrees; the paper's harness used the same conversion, so
``Turn(5)`` does nothing and ``Turn(-50)`` is 8 left steps.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeAlias

Action: TypeAlias = tuple[int, int]
"""One environment step in AAI's encoding: ``(move, turn)``."""

DEGREES_PER_STEP = 6
"""Degrees one AAI step turns the agent (rotationSpeed 100 deg/s x 3 frames x 0.02 s)."""

NOOP: Action = (0, 0)
FORWARD: Action = (1, 0)
BACKWARD: Action = (2, 0)
RIGHT: Action = (0, 1)
LEFT: Action = (0, 2)


def _check_int(value: object, what: str) -> None:
    # bool is an int subclass; Go(True) is a bug in the caller, not one step.
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{what} must be an int, got {type(value).__name__}")


@dataclass(frozen=True)
class Think:
    """Reasoning aloud; changes nothing in the environment.

    Attributes:
        text: the thought. It may not contain ``)``: the paper's grammar ends a thought at the
            first ``)``, so such a thought could not be written back as a script.

    """

    text: str

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise TypeError(f"Think.text must be a str, got {type(self.text).__name__}")
        if ")" in self.text:
            raise ValueError("Think.text may not contain ')': the grammar ends a thought there")

    def actions(self) -> list[Action]:
        """Thoughts take no environment steps."""
        return []

    def format(self) -> str:
        """Canonical text; always double quotes (no escaping needed, see the parser)."""
        return f'Think("{self.text}");'


@dataclass(frozen=True)
class Go:
    """Move ``steps`` steps forward (negative: backward; zero: nothing)."""

    steps: int

    def __post_init__(self) -> None:
        _check_int(self.steps, "Go.steps")

    def actions(self) -> list[Action]:
        """One forward (or backward) action per step."""
        return [FORWARD if self.steps > 0 else BACKWARD] * abs(self.steps)

    def format(self) -> str:
        """Canonical text, e.g. ``Go(-3);``."""
        return f"Go({self.steps});"


@dataclass(frozen=True)
class Turn:
    """Turn by ``degrees`` (positive: right/clockwise, negative: left), in 6-degree steps."""

    degrees: int

    def __post_init__(self) -> None:
        _check_int(self.degrees, "Turn.degrees")

    @property
    def n_steps(self) -> int:
        """Steps this turn takes: ``trunc(|degrees| / 6)``."""
        return abs(self.degrees) // DEGREES_PER_STEP

    def actions(self) -> list[Action]:
        """One right (or left) action per 6 whole degrees."""
        return [RIGHT if self.degrees > 0 else LEFT] * self.n_steps

    def format(self) -> str:
        """Canonical text, e.g. ``Turn(90);``."""
        return f"Turn({self.degrees});"


Command: TypeAlias = Think | Go | Turn


@dataclass(frozen=True)
class Normalization:
    """One repair lenient parsing made, so the runner can log what the model actually sent.

    Attributes:
        kind: a stable tag for counting, one of ``code_fence``, ``surrounding_prose``,
            ``lowercase_command``, ``missing_semicolon``, ``parentheses_in_thought``,
            ``other_whitespace``, ``trailing_commands``.
        detail: a human-readable sentence with the position.

    """

    kind: str
    detail: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.detail}"


@dataclass(frozen=True)
class Script:
    """A parsed script: its commands in order, and what lenient parsing had to repair.

    Equality compares the commands only, so a script parsed leniently equals the one parsed
    strictly from its canonical text.

    Attributes:
        commands: at least one command.
        normalizations: repairs made by lenient parsing (empty for strict parsing).

    """

    commands: tuple[Command, ...]
    normalizations: tuple[Normalization, ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "commands", tuple(self.commands))
        object.__setattr__(self, "normalizations", tuple(self.normalizations))
        if not self.commands:
            raise ValueError("a Script needs at least one command")
        for command in self.commands:
            if not isinstance(command, Think | Go | Turn):
                raise TypeError(f"not a command: {command!r}")

    def actions(self) -> list[Action]:
        """All frame actions, one per environment step, in order."""
        return [action for command in self.commands for action in command.actions()]

    @property
    def n_steps(self) -> int:
        """Environment steps the script takes (``len(self.actions())`` without building it)."""
        return sum(_n_steps(command) for command in self.commands)

    @property
    def thoughts(self) -> tuple[str, ...]:
        """The texts of the ``Think`` commands, in order."""
        return tuple(c.text for c in self.commands if isinstance(c, Think))

    def __str__(self) -> str:
        return format_script(self)


def _n_steps(command: Command) -> int:
    if isinstance(command, Go):
        return abs(command.steps)
    if isinstance(command, Turn):
        return command.n_steps
    return 0


def format_script(script: Script) -> str:
    """Canonical text of ``script``: commands back to back, each ended by ``;``.

    ``parse_script(format_script(s)) == s`` for every script within the parser's limits.
    """
    return "".join(command.format() for command in script.commands)
