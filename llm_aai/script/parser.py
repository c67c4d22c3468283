r"""Parse a model's reply into a ``Script``: the paper's grammar, plus an explicit lenient mode.

Strict mode (the default) accepts exactly the replies the LLM-AAI paper's parser accepted
(``LLM:src/llm_scripting/minimal_parser.py``), so results stay comparable with the paper:

* A script is one or more commands, each ended by ``;``: ``Think(...)``, ``Go(int)``,
  ``Turn(int)``. Command names are case-sensitive.
* Spaces and newlines are ignored everywhere outside a thought, as the paper's parser removed
  them before matching: ``Go( -3 ) ;`` is ``Go(-3);`` (and even ``G o(1 0);`` is ``Go(10);``).
  Other whitespace (tabs, carriage returns) is an error, as it was in the paper.
* Numbers are ASCII digits with an optional leading ``-``; no ``+``, no decimals.
* A thought is everything between ``Think(`` and the **first** ``)``, so thoughts may not
  contain ``)`` (the paper's prompt told models so). Quotes are optional and carry no
  escapes: after trimming spaces and newlines, one matching pair of ``"`` or ``'`` around the
  whole thought is removed. ``Think("It's 'far'")`` is the thought ``It's 'far'``. Unlike the
  paper's harness we keep the thought's own spaces and newlines; they never affect actions.

Deviations from the paper, each an error the model sees instead of a crash or a silent cut:

* ``Go(--3)``: the paper's pattern matched it, then its ``int()`` raised. Here: ScriptError.
* Limits (``ScriptLimits``; the paper had none): ``|Go| <= 100`` steps, ``|Turn| <= 720``
  degrees, at most 500 steps per script. Beyond them the whole script is rejected with a
  message saying the range, so the model can split the move. The paper's prompt asked for
  ``|Go| <= 35`` and ``|Turn| <= 360``, so replies that followed it are never affected.

Lenient mode first tries strict parsing; only a reply that strict parsing rejects is
repaired, and every repair is recorded in ``Script.normalizations`` (see ``Normalization``)
for the runner to log. The repairs:

* ``code_fence``: only the first fenced block (`````...`````) that contains a command is read.
* ``surrounding_prose``: text before the first command and after the last one is dropped.
  The script starts at the first ``think(``/``go(``/``turn(`` (any case); if that one does
  not parse, the reply is rejected rather than searched further, so a broken command is
  never skipped silently. Prose *between* commands on one line is an error for the same
  reason.
* ``trailing_commands``: a whole script that ends its line, followed on later lines by text
  and more commands (a plan for later turns, often), runs; what follows is not run.
* ``lowercase_command``: command names in any case (``go``, ``TURN``).
* ``missing_semicolon``: the last command may lack its ``;``, and so may a command that
  ends its line (one command per line without ``;`` is a common reply).
* ``parentheses_in_thought``: a quoted thought may contain parentheses (read up to the
  closing quote followed by ``)``); they are kept as ``[`` ``]`` so the thought stays writable.
* ``other_whitespace``: tabs, ``\r`` and other Unicode whitespace separate commands too.

An empty reply (or one with no command) is an error in both modes.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from typing import Literal, get_args

from llm_aai.script.errors import ScriptError, quoted
from llm_aai.script.model import Command, Go, Normalization, Script, Think, Turn

Mode = Literal["strict", "lenient"]
MODES: tuple[str, ...] = get_args(Mode)
"""Every reading of a script: ``strict`` (the paper's grammar) and ``lenient``."""


@dataclass(frozen=True)
class ScriptLimits:
    """Bounds that keep a reply from turning into an unbounded number of steps.

    Attributes:
        max_go: largest ``|n|`` in ``Go(n)``, in steps.
        max_turn: largest ``|d|`` in ``Turn(d)``, in degrees.
        max_steps: most environment steps one script may take in total.

    """

    max_go: int = 100
    max_turn: int = 720
    max_steps: int = 500


DEFAULT_LIMITS = ScriptLimits()

_NAMES = {"think": "Think", "go": "Go", "turn": "Turn"}
_EXAMPLES = {"Go": "Go(5)", "Turn": "Turn(-30)"}
_STRICT_SPACE = " \n"
_LETTERS = frozenset(string.ascii_letters)
_DIGITS = frozenset(string.digits)
# Where a command plausibly starts in prose (lenient mode only).
_COMMAND_START = re.compile(r"(?<![A-Za-z])(?:think|go|turn)\s*\(", re.IGNORECASE)
_FENCE = re.compile("```")
_FENCE_INFO = re.compile(r"[A-Za-z0-9_+.#-]*[ \t]*")
_CLOSING = {q: re.compile(re.escape(q) + r"\s*\)") for q in "\"'"}
# More digits than this is out of range whatever the limits; never hand it to int().
_MAX_DIGITS = 12


def parse_script(
    text: str, *, mode: Mode = "strict", limits: ScriptLimits = DEFAULT_LIMITS
) -> Script:
    """Parse a reply into a typed ``Script``.

    Args:
        text: the model's reply.
        mode: ``"strict"`` (the paper's grammar) or ``"lenient"`` (logged repairs; see the
            module docstring).
        limits: per-command and per-script bounds.

    Returns:
        The script; ``script.normalizations`` lists lenient repairs (empty if none).

    Raises:
        ScriptError: the reply is not a valid script; ``str(error)`` is feedback for the model.

    """
    if mode not in ("strict", "lenient"):
        raise ValueError(f"mode must be 'strict' or 'lenient', got {mode!r}")
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    try:
        return _Parser(text, 0, len(text), lenient=False, limits=limits, notes=[]).parse()
    except ScriptError:
        if mode == "strict":
            raise
    notes: list[Normalization] = []
    start, end = _fenced_region(text, notes)
    return _Parser(text, start, end, lenient=True, limits=limits, notes=notes).parse()


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _fenced_region(text: str, notes: list[Normalization]) -> tuple[int, int]:
    """Bounds of the first fenced block holding a command, else the whole text."""
    fences = [m.start() for m in _FENCE.finditer(text)]
    for i in range(0, len(fences), 2):
        opening = fences[i]
        closing = fences[i + 1] if i + 1 < len(fences) else len(text)
        start = opening + 3
        newline = text.find("\n", start, closing)
        # "```python\n..." : the rest of the opening line is a language tag, not script.
        if newline != -1 and _FENCE_INFO.fullmatch(text, start, newline):
            start = newline + 1
        if _COMMAND_START.search(text, start, closing):
            notes.append(
                Normalization(
                    "code_fence",
                    f"read only the code block opened on line {_line_of(text, opening)}",
                )
            )
            return start, closing
    return 0, len(text)


class _Parser:
    """A cursor over ``text[start:end]``; positions stay absolute for error messages."""

    def __init__(
        self,
        text: str,
        start: int,
        end: int,
        *,
        lenient: bool,
        limits: ScriptLimits,
        notes: list[Normalization],
    ) -> None:
        self.text = text
        self.pos = start
        self.end = end
        self.lenient = lenient
        self.limits = limits
        self.notes = notes
        self.steps = 0
        self._noted_whitespace = False

    # -- low-level cursor -------------------------------------------------------------------

    def _is_space(self, ch: str) -> bool:
        if ch in _STRICT_SPACE:
            return True
        if self.lenient and ch.isspace():
            if not self._noted_whitespace:
                self._noted_whitespace = True
                self._note("other_whitespace", f"treated {ch!r} as a separator", self.pos)
            return True
        return False

    def _skip(self) -> None:
        while self.pos < self.end and self._is_space(self.text[self.pos]):
            self.pos += 1

    def _peek(self) -> str:
        """Next character after separators, or ``""`` at the end."""
        self._skip()
        return self.text[self.pos] if self.pos < self.end else ""

    def _error(self, pos: int, reason: str) -> ScriptError:
        return ScriptError.at(self.text, pos, reason)

    def _note(self, kind: str, detail: str, pos: int) -> None:
        line = _line_of(self.text, pos)
        self.notes.append(Normalization(kind, f"{detail} (line {line})"))

    def _shown(self, pos: int) -> str:
        """Describe what stands at ``pos``, for 'found ...' in messages."""
        if pos >= self.end:
            return "the end of the script"
        snippet = self.text[pos : min(self.end, pos + 12)].split("\n", 1)[0]
        return repr(snippet) if snippet else repr(self.text[pos])

    # -- grammar ---------------------------------------------------------------------------

    def parse(self) -> Script:
        if self.lenient:
            self._skip_leading_prose()
        commands: list[Command] = []
        while self._peek():
            lenient_after_first = self.lenient and commands
            if lenient_after_first and not _COMMAND_START.match(self.text, self.pos, self.end):
                self._skip_trailing_prose()
                break
            commands.append(self._command())
        if not commands:
            raise self._error(
                self.pos,
                "the script is empty: send at least one command, e.g. Go(5); or Turn(-30);",
            )
        return Script(tuple(commands), tuple(self.notes))

    def _skip_leading_prose(self) -> None:
        self._skip()
        if self.pos >= self.end:
            return
        match = _COMMAND_START.search(self.text, self.pos, self.end)
        # With no command anywhere, parse from the start: the error then names what was sent.
        if match is not None and match.start() > self.pos:
            self._note("surrounding_prose", "dropped text before the first command", self.pos)
            self.pos = match.start()

    def _skip_trailing_prose(self) -> None:
        if _COMMAND_START.search(self.text, self.pos, self.end) is None:
            self._note("surrounding_prose", "dropped text after the last command", self.pos)
        elif self._starts_a_later_line(self.pos):
            # a whole script, then on later lines text and more commands: most often a plan
            # for the turns to come, which the next observation may change; not run, logged
            self._note("trailing_commands", "ran the script before the text after it; the "
                       "commands after that text were not run", self.pos)
        else:
            raise self._error(
                self.pos,
                "text between commands: send only commands, each ended by ';'",
            )
        self.pos = self.end

    def _starts_a_later_line(self, pos: int) -> bool:
        """Whether a line break lies between the last command and ``pos``."""
        start = pos
        while start > 0 and self.text[start - 1].isspace():
            start -= 1
        return any(ch in "\n\r" for ch in self.text[start:pos])

    def _read_name(self) -> str:
        """ASCII letters, with separators allowed between them (as in the paper)."""
        letters: list[str] = []
        probe = self.pos
        while True:
            while letters and probe < self.end and self._is_space(self.text[probe]):
                probe += 1
            if probe < self.end and self.text[probe] in _LETTERS:
                letters.append(self.text[probe])
                probe += 1
                self.pos = probe
            else:
                return "".join(letters)

    def _command(self) -> Command:
        name_pos = self.pos
        name = self._read_name()
        if not name:
            raise self._error(name_pos, self._not_a_command(name_pos))
        written = self.text[name_pos : self.pos]
        canonical = _NAMES.get(name.lower())
        if canonical is None:
            raise self._error(
                name_pos, f"unknown command {quoted(written)}: the commands are Think, Go and Turn"
            )
        if name != canonical:
            if not self.lenient:
                raise self._error(
                    name_pos,
                    f"command names are case-sensitive: write {canonical!r}, not {quoted(written)}",
                )
            self._note("lowercase_command", f"read {quoted(written)} as {canonical!r}",
                       name_pos)
        if self._peek() != "(":
            raise self._error(
                self.pos, f"expected '(' after {canonical}, found {self._shown(self.pos)}"
            )
        open_pos = self.pos
        self.pos += 1
        if canonical == "Think":
            text, early_close = self._thought(open_pos)
            command: Command = Think(text)
        else:
            command = self._movement(canonical, name_pos)
            early_close = None
        self._semicolon(command, early_close)
        return command

    def _not_a_command(self, pos: int) -> str:
        ch = self.text[pos]
        if ch == "`":
            return "unexpected '`': send the commands only, without code fences"
        if ch.isspace():
            return f"unexpected whitespace {ch!r}: only spaces and newlines may separate commands"
        if ch == ";":
            return "unexpected ';': every ';' must end a command (no empty commands)"
        return f"expected a command (Think, Go or Turn), found {self._shown(pos)}"

    def _thought(self, open_pos: int) -> tuple[str, int | None]:
        """Read a thought after ``Think(``.

        Returns:
            The thought, and the position of its closing ``)`` if the thought opened a quote
            it did not close there (the likely cause of an error that follows).

        """
        start = self.pos
        if self.lenient:
            quote_pos = start
            while quote_pos < self.end and self.text[quote_pos].isspace():
                quote_pos += 1
            quote = self.text[quote_pos] if quote_pos < self.end else ""
            closing = (
                _CLOSING[quote].search(self.text, quote_pos + 1, self.end)
                if quote in _CLOSING
                else None
            )
            if closing is not None and ")" in self.text[quote_pos + 1 : closing.start()]:
                inner = self.text[quote_pos + 1 : closing.start()]
                self._note(
                    "parentheses_in_thought", "wrote the thought's parentheses as [ ]", open_pos
                )
                self.pos = closing.end()
                return inner.replace("(", "[").replace(")", "]"), None
        close = self.text.find(")", start, self.end)
        if close == -1:
            raise self._error(
                open_pos, "Think( is never closed: end the thought with ')' and then ';'"
            )
        self.pos = close + 1
        raw = self.text[start:close]
        trimmed = raw.strip() if self.lenient else raw.strip(_STRICT_SPACE)
        if len(trimmed) >= 2 and trimmed[0] == trimmed[-1] and trimmed[0] in "\"'":
            return trimmed[1:-1], None
        return trimmed, close if trimmed[:1] in ("\"", "'") else None

    def _movement(self, name: str, name_pos: int) -> Command:
        self._peek()
        minus_pos = self.pos
        minuses = 0
        while self._peek() == "-":
            minuses += 1
            self.pos += 1
        if minuses > 1:
            raise self._error(minus_pos, f"{name} has more than one minus sign")
        number_pos = self.pos
        digits: list[str] = []
        while (ch := self._peek()) and ch in _DIGITS:
            digits.append(ch)
            self.pos += 1
        if not digits:
            raise self._error(
                number_pos,
                f"{name} takes a whole number, e.g. {_EXAMPLES[name]}; "
                f"found {self._shown(number_pos)}",
            )
        if self._peek() in (".", ","):
            raise self._error(
                self.pos, f"{name} takes whole numbers only (no decimals), e.g. {_EXAMPLES[name]}"
            )
        if self._peek() != ")":
            raise self._error(
                self.pos, f"expected ')' after the number in {name}, found {self._shown(self.pos)}"
            )
        self.pos += 1
        number = ("-" if minuses else "") + "".join(digits)
        limit = self.limits.max_go if name == "Go" else self.limits.max_turn
        unit = "steps" if name == "Go" else "degrees"
        if len(digits) > _MAX_DIGITS or abs(int(number)) > limit:
            raise self._error(
                number_pos,
                f"{name}({_clip(number, 16)}) is out of range: {name} takes -{limit} to "
                f"{limit} {unit}; split a longer move into several commands",
            )
        command: Command = Go(int(number)) if name == "Go" else Turn(int(number))
        self.steps += len(command.actions())
        if self.steps > self.limits.max_steps:
            raise self._error(
                name_pos,
                f"the script is too long: up to here it takes {self.steps} steps, but one "
                f"script may take at most {self.limits.max_steps}; send the rest next time",
            )
        return command

    def _semicolon(self, command: Command, early_close: int | None) -> None:
        after = self.pos
        ch = self._peek()
        if ch == ";":
            self.pos += 1
            return
        if early_close is not None:
            raise self._error(
                early_close,
                "the thought ended at its first ')': a thought may not contain parentheses",
            )
        written = _clip(command.format()[:-1])
        next_command = bool(ch) and _COMMAND_START.match(self.text, self.pos, self.end)
        line_break = "\n" in self.text[after : self.pos]
        if not self.lenient or (next_command and not line_break):
            raise self._error(
                self.pos, f"missing ';' after {written}, found {self._shown(self.pos)}"
            )
        where = "at the end of its line" if next_command else "at the end of the script"
        self._note("missing_semicolon", f"added the ';' after {written} {where}", after)


def _clip(command_text: str, width: int = 40) -> str:
    return command_text if len(command_text) <= width else command_text[: width - 3] + "..."
