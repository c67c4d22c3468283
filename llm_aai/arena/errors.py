"""The two ways an arena can fail: a bad file, or a world with no room for the agent.

``ArenaError`` is a ``ValueError`` that always knows where it came from, so every layer (the
loader, the validator, the CLI) reports problems the same way: ``file:line: field: message``,
the form editors and CI logs turn into clickable links.
"""

from __future__ import annotations

from dataclasses import dataclass


class ArenaError(ValueError):
    """A problem in an arena file, located by file, line and field.

    Attributes:
        file: path of the file (or ``<string>`` for text).
        line: 1-based line, or None when the problem has no single line (empty file...).
        field: the YAML key at fault (``positions``, ``t``...), or None.
        message: what is wrong and, where possible, how to fix it.
        severity: ``"error"`` makes a file invalid; ``"warning"`` flags a value AAI accepts
            but silently changes (a size it clamps, for example).

    """

    def __init__(
        self,
        message: str,
        *,
        file: str = "<string>",
        line: int | None = None,
        field: str | None = None,
        severity: str = "error",
    ) -> None:
        self.file = file
        self.line = line
        self.field = field
        self.message = message
        self.severity = severity
        super().__init__(str(self))

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        what = self.message if self.field is None else f"{self.field}: {self.message}"
        prefix = "warning: " if self.severity == "warning" else ""
        return f"{where}: {prefix}{what}"

    def __reduce__(self):  # keep keyword-only attributes through pickling (multiprocessing)
        return (_rebuild, (self.message, self.file, self.line, self.field, self.severity))


def _rebuild(message, file, line, field, severity) -> ArenaError:
    return ArenaError(message, file=file, line=line, field=field, severity=severity)


@dataclass
class PlacementError(RuntimeError):
    """The agent found no free spot, so the arena cannot be played (AAI would hang or fail).

    Attributes:
        source: the arena file (or a description) that could not be placed.
        message: why.

    """

    source: str
    message: str

    def __str__(self) -> str:
        return f"{self.source}: {self.message}"
