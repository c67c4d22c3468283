"""How a reply becomes frame actions: the control mode of an episode.

A ``Control`` reads one reply and returns a ``Decision``: the actions to take, or why the
reply was refused (the episode then takes the protocol's no-op steps and the caller sends the
reason back as feedback). The paper's mode is ``ScriptControl``: the reply is a Think/Go/Turn
script (``llm_aai.script``). Another mode is another class with the same ``decide`` method,
for example one that maps a reply to one of AAI's 9 actions repeated a few frames, or one
that accepts a whole plan to run open-loop.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from llm_aai.script.errors import ScriptError
from llm_aai.script.model import Action, Script
from llm_aai.script.parser import Mode, parse_script


@dataclass(frozen=True)
class Decision:
    """What one reply asks the agent to do.

    Attributes:
        actions: ``(move, turn)`` per step, in order (empty if refused, or if the reply takes
            no step, e.g. only thoughts).
        error: why the reply was refused, for the model's feedback; None if accepted.
        script: the parsed script, for the log (None if refused, or for a control that does
            not use the script language).
        notes: repairs made to accept the reply (``lenient`` script mode), for the log.
        commands: what a control that does not use the script language read, as log records
            (``[{"op": "Act", "arg": "forward", "repeat": 3}]``); None for scripts, whose
            commands the log takes from ``script``.

    """

    actions: tuple[Action, ...] = ()
    error: str | None = None
    script: Script | None = None
    notes: tuple[str, ...] = ()
    commands: tuple[dict, ...] | None = None

    @property
    def refused(self) -> bool:
        """The reply could not be read; the protocol charges its no-op step(s) instead."""
        return self.error is not None


class Control(Protocol):
    """Turns a reply into a ``Decision``; the only part of the protocol that reads replies."""

    def decide(self, reply: str) -> Decision:
        """Read ``reply``; never raise for a bad reply (refuse it with an ``error``)."""
        ...


@dataclass(frozen=True)
class ScriptControl:
    """The paper's control: each reply is a Think/Go/Turn script played in full.

    Attributes:
        mode: ``"strict"`` (the paper's grammar) or ``"lenient"`` (repairs logged as notes).
        our_text: the texts we send the model that show commands (the feedback to a refused
            reply, with its example script). Read leniently, a reply repeating one of their
            lines, or whose script is the one they show, is refused: lenient reading would
            otherwise run our example as the model's decision, or commands found in a copy
            of the parser's message. Strict reading is the paper's and takes such a reply as
            it took it.

    """

    mode: Mode = "strict"
    our_text: tuple[str, ...] = ()

    def decide(self, reply: str) -> Decision:
        """Parse ``reply``; a script error refuses it with the parser's message."""
        lenient = self.mode == "lenient"
        if lenient and _holds_a_line_of(reply, self.our_text):  # whether it parses or not
            return Decision(error=COPIED_REPLY)
        try:
            script = parse_script(reply, mode=self.mode)
        except ScriptError as error:
            return Decision(error=str(error))
        if lenient and _shows(self.our_text, script):
            return Decision(error=COPIED_REPLY)
        return Decision(actions=tuple(script.actions()), script=script,
                        notes=tuple(str(note) for note in script.normalizations))


COPIED_REPLY = ("the reply repeats our message instead of giving commands of your own: "
                "write the script for what you see now")
"""Why a reply copied from our own text is refused (sent back as its feedback)."""
COPIED_LINE_CHARACTERS = 20
"""Lines of our texts shorter than this (``Go(5);``) may well be written by the model itself."""


def _holds_a_line_of(reply: str, our_text: tuple[str, ...]) -> bool:
    """Whether ``reply`` holds a line of one of our texts (a short one aside)."""
    return any(len(line) >= COPIED_LINE_CHARACTERS and line in reply
               for text in our_text for line in (line.strip() for line in text.splitlines()))


def _shows(our_text: tuple[str, ...], script: Script) -> bool:
    """Whether one of our texts shows ``script`` (its commands) as an example."""
    for text in our_text:
        try:
            shown = parse_script(text, mode="lenient")
        except ScriptError:
            continue  # a text that shows no script
        if shown.commands == script.commands:
            return True
    return False
