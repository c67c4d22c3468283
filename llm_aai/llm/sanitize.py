"""Make what a server or a model sends safe to keep and to print.

Text every later request can encode: a provider's JSON may hold an escaped lone UTF-16
surrogate (backslash, ``ud800``); Python decodes it into a string that cannot be encoded as
UTF-8. Kept in the conversation, such a reply would make every later request of the episode
fail on our side, before anything is sent. So each reply is cleaned where it enters the
program, and what was replaced is reported, to be logged with the turn.

Text a terminal only shows: an escape sequence in a reply or in a server's error message
would be obeyed by the terminal it is printed on (clear the screen, retitle the window, or,
with OSC 52, write the clipboard). ``strip_control`` removes them, and every other control
character but tab and newline; the client applies it to replies (``sanitize_reply``) and
``describe_error`` to every error text from a provider, the two ways such text comes in.
"""

from __future__ import annotations

import re

__all__ = ["REPLACEMENT", "sanitize_reply", "strip_control"]

REPLACEMENT = "\ufffd"
"""Unicode's replacement character, what a lone surrogate becomes."""

# A str holds a surrogate code point only unpaired: JSON decoding joins valid pairs.
_SURROGATE = re.compile("[\ud800-\udfff]")

_CONTROL = re.compile(
    "\x1b\\][^\x07\x1b]*(?:\x07|\x1b\\\\)?"  # OSC (title, clipboard...) up to BEL or ST
    "|\x1b\\[[0-?]*[ -/]*[@-~]?"  # CSI (cursor, erase, colours)
    "|\x1b[ -/]*[0-~]?"  # any other escape sequence
    "|[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # any other control character (C0, DEL, C1)
"""Escape sequences whole, then single control characters; tab and newline are kept."""


def strip_control(text: str) -> tuple[str, int]:
    """Remove terminal escape sequences and control characters (tab and newline stay).

    Returns:
        The clean text and how many sequences or characters were removed.

    """
    return _CONTROL.subn("", text)


def sanitize_reply(text: str) -> tuple[str, tuple[str, ...]]:
    """Replace every lone surrogate in ``text`` with U+FFFD, and remove control characters.

    Returns:
        The clean text and a note per replaced character (empty when nothing was replaced),
        e.g. ``reply: a lone surrogate U+D800 at character 11 was replaced with U+FFFD``.

    """
    text, removed = strip_control(text)
    notes = () if not removed else (
        f"reply: {removed} control character(s) or terminal escape sequence(s) removed",)
    notes += tuple(f"reply: a lone surrogate U+{ord(match.group()):04X} at character "
                  f"{match.start()} was replaced with U+FFFD (it cannot be sent as UTF-8)"
                  for match in _SURROGATE.finditer(text))
    return _SURROGATE.sub(REPLACEMENT, text), notes
