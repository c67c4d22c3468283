"""The one exception the script language raises, with a position the model can act on.

A ``ScriptError`` is feedback, not a crash: the runner sends ``str(error)`` back to the model
as the reason its reply was rejected. So the message names what was wrong in plain words,
where it was (line and column, both 1-based) and shows the offending line with a caret.
"""

from __future__ import annotations

__all__ = ["QUOTE_WIDTH", "ScriptError", "quoted"]

_EXCERPT_WIDTH = 72
QUOTE_WIDTH = 40
"""The most characters of the model's own text a message quotes in its reason: the feedback
goes back to the model, and every later request of the episode carries it (a reply of one
1 MB word was quoted whole, so each request after it carried the word twice)."""


class ScriptError(ValueError):
    """A reply that is not a valid script.

    Attributes:
        reason: what was wrong, one sentence, no position.
        line: 1-based line of the problem in the text that was parsed.
        column: 1-based column (in characters) of the problem.
        excerpt: the offending line (clipped around the column) and a caret under the column.

    """

    def __init__(self, reason: str, line: int, column: int, excerpt: str) -> None:
        # Keep every field in ``args`` so the error survives pickling (multiprocessing runners).
        super().__init__(reason, line, column, excerpt)
        self.reason = reason
        self.line = line
        self.column = column
        self.excerpt = excerpt

    @classmethod
    def at(cls, text: str, pos: int, reason: str) -> ScriptError:
        """Build the error for character offset ``pos`` of ``text`` (``len(text)`` = the end)."""
        pos = max(0, min(pos, len(text)))
        line_start = text.rfind("\n", 0, pos) + 1
        line_end = text.find("\n", pos)
        if line_end == -1:
            line_end = len(text)
        line = text.count("\n", 0, pos) + 1
        column = pos - line_start + 1
        return cls(reason, line, column, _excerpt(text[line_start:line_end], column - 1))

    def __str__(self) -> str:
        return f"line {self.line}, column {self.column}: {self.reason}\n{self.excerpt}"


def quoted(text: str, width: int = QUOTE_WIDTH) -> str:
    """``text`` quoted as ``repr`` does, cut to ``width`` characters with ``...`` after the cut.

    For the reason of a message that names what the model wrote (an unknown command, an
    action that is none): the excerpt below it shows where; the reason needs only its start.
    """
    if len(text) <= width:
        return repr(text)
    return repr(text[: width - 3]) + "..."


def _excerpt(line: str, index: int) -> str:
    """Clip ``line`` to a window around ``index`` and put a caret under that character.

    Characters that would break the caret's alignment or the message (tabs, carriage returns,
    other control characters) are shown as spaces or ``?``.
    """
    start = 0
    if len(line) > _EXCERPT_WIDTH:
        start = max(0, min(index - _EXCERPT_WIDTH // 2, len(line) - _EXCERPT_WIDTH))
    shown = line[start : start + _EXCERPT_WIDTH]
    shown = "".join(" " if ch == "\t" else ch if ch.isprintable() else "?" for ch in shown)
    prefix = "..." if start > 0 else ""
    suffix = "..." if start + _EXCERPT_WIDTH < len(line) else ""
    caret = " " * (len(prefix) + index - start) + "^"
    return f"  {prefix}{shown}{suffix}\n  {caret}"
