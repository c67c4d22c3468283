"""Make a model's reply safe to keep: text every later request can encode.

A provider's JSON may hold an escaped lone UTF-16 surrogate (backslash, ``ud800``); Python
decodes it into a string that cannot be encoded as UTF-8. Kept in the conversation, such a
reply would make every later request of the episode fail on our side, before anything is
sent. So each reply is cleaned where it enters the program, and what was replaced is
reported, to be logged with the turn.
"""

from __future__ import annotations

import re

__all__ = ["REPLACEMENT", "sanitize_reply"]

REPLACEMENT = "\ufffd"
"""Unicode's replacement character, what a lone surrogate becomes."""

# A str holds a surrogate code point only unpaired: JSON decoding joins valid pairs.
_SURROGATE = re.compile("[\ud800-\udfff]")


def sanitize_reply(text: str) -> tuple[str, tuple[str, ...]]:
    """Replace every lone surrogate in ``text`` with U+FFFD.

    Returns:
        The clean text and a note per replaced character (empty when nothing was replaced),
        e.g. ``reply: a lone surrogate U+D800 at character 11 was replaced with U+FFFD``.

    """
    notes = tuple(f"reply: a lone surrogate U+{ord(match.group()):04X} at character "
                  f"{match.start()} was replaced with U+FFFD (it cannot be sent as UTF-8)"
                  for match in _SURROGATE.finditer(text))
    if not notes:
        return text, ()
    return _SURROGATE.sub(REPLACEMENT, text), notes
