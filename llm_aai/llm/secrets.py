"""Keep API keys out of reprs, logs and error messages."""

from __future__ import annotations

__all__ = ["Secret", "redact"]

MASK = "***"


class Secret:
    """Holds a key; its ``repr``/``str`` never show the value.

    Args:
        value: the secret string.

    """

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        """Return the raw value, only to hand it to the HTTP client."""
        return self._value

    def __repr__(self) -> str:
        return f"Secret({MASK!r})"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(("Secret", self._value))


def redact(text: str, *secrets: str | None) -> str:
    """Replace every occurrence of each non-empty secret in ``text`` with ``***``.

    Provider error messages sometimes echo (part of) the key; we scrub the exact value
    and any long suffix of it, which is how providers usually abbreviate keys.
    """
    for secret in secrets:
        if not secret or len(secret) < 4:
            continue
        text = text.replace(secret, MASK)
        tail = secret[-8:]
        if len(secret) > 12 and tail in text:
            text = text.replace(tail, MASK)
    return text
