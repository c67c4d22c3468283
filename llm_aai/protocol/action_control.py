"""Per-action control: each reply picks one of AAI's 9 actions, repeated a few steps.

The paper's scripts are coarse next to the children and the RL agents, who act on every
step. In this mode (``--control action``) a reply names one of AAI's nine actions (move none,
forward or back, times turn none, right or left) and may repeat it up to ``MAX_REPEAT``
steps; an observation follows every reply. A reply may start with one ``Think("...");`` so
that a model's reasoning is logged as in script mode::

    Think("The green ball is ahead.");forward x4

A reply that does not read this way is refused with a message saying what was wrong; the
episode then takes the protocol's no-op step(s), as for a script that does not parse.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from llm_aai.protocol.control import Decision
from llm_aai.script.errors import quoted
from llm_aai.script.model import Action

__all__ = ["ACTION_NAMES", "MAX_REPEAT", "ActionControl", "action_name", "action_reply"]

ACTION_NAMES: dict[str, Action] = {
    "stay": (0, 0),
    "forward": (1, 0),
    "back": (2, 0),
    "right": (0, 1),
    "left": (0, 2),
    "forward-right": (1, 1),
    "forward-left": (1, 2),
    "back-right": (2, 1),
    "back-left": (2, 2),
}
"""The names the frame prompt defines for AAI's ``(move, turn)`` actions."""

MAX_REPEAT = 4
"""Most steps one reply may repeat its action (``forward x4``): small, so every few frames
are seen before the next choice, and never more than a Go(4) or Turn(24)."""

_REPEAT_DIGITS = 6
"""More digits than this in a repeat count are out of range, and shown cut."""

_NAME_OF = {action: name for name, action in ACTION_NAMES.items()}

_REPLY = re.compile(
    r"""\A\s*
    (?:Think\(\s*(?P<quote>["']?)(?P<thought>[^)]*?)(?P=quote)\s*\)\s*;\s*)?
    (?P<name>[A-Za-z][A-Za-z-]*)
    (?:\s*[xX]\s*(?P<repeat>[0-9]+))?
    \s*;?\s*\Z""",
    re.VERBOSE | re.DOTALL,
)


def action_name(action: Action) -> str:
    """The prompt's name for an action ``(move, turn)``."""
    return _NAME_OF[tuple(int(v) for v in action)]


def action_reply(action: Action, repeat: int = 1, thought: str | None = None) -> str:
    """A reply in this mode's grammar (what the built-in agents send)."""
    if not 1 <= repeat <= MAX_REPEAT:
        raise ValueError(f"repeat must be in 1..{MAX_REPEAT}, got {repeat}")
    head = f'Think("{thought}");' if thought else ""
    return head + action_name(action) + (f" x{repeat}" if repeat > 1 else "")


@dataclass(frozen=True)
class ActionControl:
    """Reads a reply as one named action, repeated 1 to ``MAX_REPEAT`` steps.

    Attributes:
        mode: ``"strict"``: names exactly as the prompt spells them; ``"lenient"`` also
            takes them in any case and inside a code fence, noting each repair.

    """

    mode: str = "strict"

    def decide(self, reply: str) -> Decision:
        """The action of ``reply`` repeated, or a refusal saying how to write one."""
        notes: list[str] = []
        text = reply
        if self.mode == "lenient":
            fenced = re.search(r"```[A-Za-z]*\n?(.*?)```", text, re.DOTALL)
            if fenced:
                text = fenced.group(1)
                notes.append("code_fence: read the fenced block only")
        match = _REPLY.match(text)
        if match is None:
            return Decision(error=_refusal(reply))
        name = match["name"]
        if name not in ACTION_NAMES and self.mode == "lenient" and name.lower() in ACTION_NAMES:
            notes.append(f"lowercase_action: {name!r} read as {name.lower()!r}")
            name = name.lower()
        if name not in ACTION_NAMES:
            return Decision(error=f"{quoted(name)} is not an action; the actions are "
                                  f"{', '.join(ACTION_NAMES)}")
        written = match["repeat"] or "1"
        # a count of thousands of digits is out of range unread (int() refuses over 4,300)
        long = len(written.lstrip("0")) > _REPEAT_DIGITS
        repeat = MAX_REPEAT + 1 if long else int(written)
        if not 1 <= repeat <= MAX_REPEAT:
            shown = written[:_REPEAT_DIGITS] + "..." if len(written) > _REPEAT_DIGITS else written
            return Decision(error=f"x{shown}: an action repeats 1 to {MAX_REPEAT} times")
        commands: list[dict] = []
        if match["thought"] is not None:
            commands.append({"op": "Think", "arg": match["thought"]})
        commands.append({"op": "Act", "arg": name, "repeat": repeat})
        return Decision(actions=(ACTION_NAMES[name],) * repeat, commands=tuple(commands),
                        notes=tuple(notes))


def _refusal(reply: str) -> str:
    if not reply.strip():
        return "the reply is empty; send one action name, e.g. forward x3"
    return ("the reply is not one action: send an optional Think(\"...\"); then one action "
            f"name ({', '.join(ACTION_NAMES)}), optionally followed by x2 to x{MAX_REPEAT}, "
            "and nothing else")
