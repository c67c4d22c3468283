"""The fake server's script as a command line gives it: replies from a file, faults by number.

``python -m llm_aai.llm.fake_server`` cannot take Python objects, so its script is text: a
file of replies (one a line, or a JSON or YAML list) and faults written ``KIND@N``, "answer
the N-th request with KIND", in the vocabulary of ``llm_aai.llm.fake_server``'s actions.
Everything read here is untrusted text: a mistake is a ``ScriptError`` naming the file and
line (or the flag) and what was wrong, never a half-read script.
"""

from __future__ import annotations

import json
import math
import threading
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from llm_aai.llm.fake_server import (
    Action,
    Cut,
    Delay,
    Drop,
    HTTPError,
    RateLimit,
    ServerError,
    Trickle,
)

__all__ = ["FAULT_KINDS", "Fault", "Script", "ScriptError", "load_faults", "load_replies",
           "parse_fault"]

MAX_SCRIPT_BYTES = 64 * 1024 * 1024
"""The largest replies or faults file read (a script of replies is a few kilobytes)."""

FAULT_KINDS = ("429", "429:SECONDS", "4xx/5xx status", "drop", "delay:SECONDS",
               "trickle:SECONDS", "cut")
"""How ``KIND`` is written in ``KIND@N``, for help and error texts."""


class ScriptError(ValueError):
    """A replies or faults file, or a ``--fault``, that cannot be read; the message says where."""


@dataclass(frozen=True)
class Fault:
    """What the ``at``-th request (counted from 1) gets instead of the next reply.

    Attributes:
        at: the request's number.
        make: the action, given the reply the request would have had (a delayed, trickled
            or cut reply is still that reply).
        takes_reply: whether the fault uses up a reply (delay, trickle, cut) or stands in
            for none (an error status, a dropped connection), so the reply goes to the next
            request.
        text: the fault as written.

    """

    at: int
    make: Callable[[str], Action]
    takes_reply: bool
    text: str


def _seconds(text: str, spec: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ScriptError(f"{spec!r}: {text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value < 0:
        raise ScriptError(f"{spec!r}: {text!r} is not a number of seconds (0 or more)")
    return value


def _kind(kind: str, spec: str) -> tuple[Callable[[str], Action], bool]:
    """The action ``kind`` makes, and whether it takes a reply."""
    name, _, argument = kind.partition(":")
    name = name.lower()
    if name == "429":
        retry_after = _seconds(argument, spec) if argument else 1.0
        return (lambda _reply: RateLimit(retry_after)), False
    if name in ("delay", "trickle") and argument:
        seconds = _seconds(argument, spec)
        if name == "delay":
            return (lambda reply: Delay(seconds, reply)), True
        return (lambda reply: Trickle(seconds, reply)), True
    if name in ("delay", "trickle"):
        raise ScriptError(f"{spec!r}: {name} needs its seconds ({name}:SECONDS)")
    if argument:
        raise ScriptError(f"{spec!r}: {name} takes no ':' value")
    if name == "drop":
        return (lambda _reply: Drop()), False
    if name == "cut":
        return Cut, True
    if name.isdigit() and 400 <= int(name) <= 599:
        status = int(name)
        if status >= 500:
            return (lambda _reply: ServerError(status)), False
        return (lambda _reply: HTTPError(status, f"fake server: scripted {status}")), False
    raise ScriptError(f"{spec!r}: unknown fault {kind!r}; a fault is one of "
                      f"{', '.join(FAULT_KINDS)}")


def parse_fault(spec: str) -> Fault:
    """``KIND@N``: the N-th request (from 1) gets KIND, e.g. ``429@3``, ``delay:5@2``."""
    kind, at_sign, number = spec.strip().rpartition("@")
    if not at_sign or not kind:
        raise ScriptError(f"{spec!r}: a fault is written KIND@N (e.g. 429@3: the third "
                          f"request is answered 429)")
    if not number.isdigit() or int(number) < 1:
        raise ScriptError(f"{spec!r}: {number!r} is not a request number (1 or more)")
    make, takes_reply = _kind(kind, spec)
    return Fault(int(number), make, takes_reply, spec.strip())


def _text(path: Path) -> str:
    """The file's text; UTF-8 or a ``ScriptError`` naming the line that is not."""
    try:
        size = path.stat().st_size
        if size > MAX_SCRIPT_BYTES:
            raise ScriptError(f"{path}: {size} bytes, more than the {MAX_SCRIPT_BYTES} a "
                              f"script may have")
        data = path.read_bytes()
    except OSError as error:
        raise ScriptError(f"{path}: cannot read it ({error.strerror or error})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise ScriptError(f"{path}:{line}: not UTF-8 text") from None


def load_faults(path: Path) -> list[Fault]:
    """One ``KIND@N`` a line; blank lines and ``#`` comments are skipped."""
    faults = []
    for number, line in enumerate(_text(path).splitlines(), 1):
        spec = line.split("#", 1)[0].strip()
        if not spec:
            continue
        try:
            faults.append(parse_fault(spec))
        except ScriptError as error:
            raise ScriptError(f"{path}:{number}: {error}") from None
    return faults


def load_replies(path: Path) -> list[str]:
    """The replies in ``path``: a ``.json`` or ``.yaml``/``.yml`` list, else one a line.

    In a text file each non-blank line is one reply, as it is written; a reply that spans
    lines, or an empty one, needs the JSON or YAML form.
    """
    text = _text(path)
    suffix = path.suffix.lower()
    if suffix == ".json":
        replies = _json_replies(text, path)
    elif suffix in (".yaml", ".yml"):
        replies = _yaml_replies(text, path)
    else:
        replies = [line for line in text.splitlines() if line.strip()]
    if not replies:
        raise ScriptError(f"{path}: no replies in it")
    return replies


def _line(text: str, position: int) -> int:
    return text.count("\n", 0, position) + 1


def _json_replies(text: str, path: Path) -> list[str]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ScriptError(f"{path}:{error.lineno}: not JSON ({error.msg}, column "
                          f"{error.colno})") from None
    start = len(text) - len(text.lstrip())
    if not isinstance(data, list):
        raise ScriptError(f"{path}:{_line(text, start)}: a JSON list of replies (strings) is "
                          f"wanted, not {type(data).__name__}")
    # Parsed whole above; walk it again item by item only to know each item's line.
    decoder = json.JSONDecoder()
    position = start + 1
    for number in range(1, len(data) + 1):
        while text[position] in " \t\r\n,":
            position += 1
        item, end = decoder.raw_decode(text, position)
        if not isinstance(item, str):
            raise ScriptError(f"{path}:{_line(text, position)}: reply {number} is "
                              f"{json.dumps(item)[:40]}, not a string")
        position = end
    return data


def _yaml_replies(text: str, path: Path) -> list[str]:
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)  # nodes only: nothing is built
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise ScriptError(f"{path}{line}: not YAML ({problem})") from None
    if not isinstance(root, yaml.SequenceNode):
        line = f":{root.start_mark.line + 1}" if root is not None else ""
        raise ScriptError(f"{path}{line}: a YAML list of replies is wanted")
    replies = []
    for number, node in enumerate(root.value, 1):
        if not (isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:str"):
            raise ScriptError(f"{path}:{node.start_mark.line + 1}: reply {number} is not "
                              f"text (quote it if it is meant as a reply)")
        replies.append(node.value)
    return replies


class Script:
    """The fake server's responder: faults at their requests, replies in order between them.

    Once the replies run out, every request gets ``default``.
    """

    def __init__(self, replies: Iterable[str], faults: Iterable[Fault], default: str) -> None:
        self._replies = deque(replies)
        self._faults: dict[int, Fault] = {}
        for fault in faults:
            if fault.at in self._faults:
                raise ScriptError(f"{self._faults[fault.at].text!r} and {fault.text!r} both "
                                  f"answer request {fault.at}")
            self._faults[fault.at] = fault
        self._default = default
        self._lock = threading.Lock()
        self.answered = 0

    def __call__(self, _body: dict[str, Any]) -> Action:
        """The action for the next request."""
        with self._lock:
            self.answered += 1
            fault = self._faults.get(self.answered)
            if fault is not None and not fault.takes_reply:
                return fault.make("")
            reply = self._replies.popleft() if self._replies else self._default
        return reply if fault is None else fault.make(reply)
