"""Which ``Host`` and ``Origin`` a server on the loopback answers to (DNS rebinding).

Both servers of the project use it: the viewer's (``llm_aai.view.serve``) and the human-play
server (``llm_aai.human``), which also checks ``Origin`` on the requests that change state.

A page of another site whose name was pointed at 127.0.0.1 reaches a loopback server with its
own name in ``Host`` (and in ``Origin``), so a server bound to a loopback address takes only
the names that mean this machine: the address it is bound to and ``localhost``. Every loopback
address counts (``::1``, ``127.0.0.2``...), not only 127.0.0.1. Names are compared as DNS
compares them: case aside, and one trailing dot aside (``LOCALHOST.``); an IPv6 address comes
in brackets (``[::1]:8090``). A server bound to another address (a study over the network) is
reached by whatever name its network gives it, so any name is taken there.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Collection

__all__ = ["ANY", "LOCALHOST", "LOOPBACK", "LOOPBACK_NAMES", "address_name", "allowed_hosts",
           "host_allowed", "host_name", "is_loopback", "loopback_names", "same_authority",
           "split_authority"]

_NAME = re.compile(r"[a-z0-9-]+(?:\.[a-z0-9-]+)*")
"""A host name as DNS writes it (lower case by then): labels of letters, digits and hyphens."""

ANY = "*"
"""In an ``allowed_hosts`` answer: any name is taken."""
LOOPBACK = "127.0.0.1"
"""The address the project's servers bind by default."""
LOCALHOST = "localhost"
LOOPBACK_NAMES = (LOOPBACK, LOCALHOST)
"""The names a server on 127.0.0.1 answers to (any other is refused: DNS rebinding)."""


def is_loopback(address: str) -> bool:
    """Whether ``address`` (an IP address or ``localhost``) is this machine only.

    IPv4 mapped into IPv6 counts as its IPv4 address; an IPv6 zone (``fe80::1%eth0``) is left
    out of the test. The servers, a Ray started here and the fake server's command line all
    ask here.
    """
    name = address_name(address.split("%")[0])
    if name == "localhost":
        return True
    try:
        ip = ipaddress.ip_address(name)
    except ValueError:
        return False
    return (getattr(ip, "ipv4_mapped", None) or ip).is_loopback


def address_name(address: str) -> str:
    """An address or name as ``host_name`` gives a Host's (``::1``, ``localhost``...)."""
    text = address.strip().strip("[]").lower()
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        return text[:-1] if text.endswith(".") else text


def allowed_hosts(bound: str) -> tuple[str, ...]:
    """The names a server bound to ``bound`` answers to (``(ANY,)``: every name).

    Args:
        bound: the address the socket listens on (``127.0.0.1``, ``::1``, ``0.0.0.0``...).

    """
    if not is_loopback(bound):
        return (ANY,)
    names = {"localhost", address_name(bound)}
    if address_name(bound) == "localhost":
        names |= {"127.0.0.1", "::1"}
    return tuple(sorted(names))


def loopback_names(bound: str) -> frozenset[str] | None:
    """``allowed_hosts`` as a set, or None where any name is taken (a server bound elsewhere)."""
    names = allowed_hosts(bound)
    return None if ANY in names else frozenset(names)


def host_name(authority: str | None) -> str | None:
    """The host of a ``Host`` header or an origin's authority, normalised; None: malformed.

    ``[::1]:8090`` gives ``::1``; ``LocalHost.:8090`` gives ``localhost``. An IP address is
    given in its compressed form, so ``[0:0:0:0:0:0:0:1]`` is ``::1``.
    """
    split = None if authority is None else split_authority(authority)
    return None if split is None else split[0]


def split_authority(authority: str) -> tuple[str, str] | None:
    """``(host, port)`` of an authority (``host_name``'s host; the port as given, or "")."""
    text = authority  # as sent: spaces, user info or a path make it malformed
    if text.startswith("["):
        inside, closed, rest = text[1:].partition("]")
        if not closed or (rest and not _is_port(rest)):
            return None
        try:
            return str(ipaddress.IPv6Address(inside)), rest[1:]
        except ValueError:
            return None
    name, colon, port = text.rpartition(":") if ":" in text else (text, "", "")
    if colon and not _is_port(colon + port):
        return None
    if ":" in name:  # an IPv6 address without brackets is not a Host
        return None
    name = name.lower()
    if name.endswith("."):
        name = name[:-1]
    if not name or name.endswith("."):
        return None
    try:
        return str(ipaddress.ip_address(name)), port
    except ValueError:
        return (name, port) if _NAME.fullmatch(name) else None


def host_allowed(authority: str | None, allowed: Collection[str] | None) -> bool:
    """Whether a request naming ``authority`` (its ``Host``) may be answered.

    Args:
        authority: the ``Host`` header (None: none was sent, as only HTTP/1.0 clients do).
        allowed: from ``allowed_hosts`` (or ``loopback_names``: None takes any).

    """
    if allowed is None or ANY in allowed:
        return True
    if authority is None:
        return False
    name = host_name(authority)
    return name is not None and name in {address_name(entry) for entry in allowed}


def _is_port(text: str) -> bool:
    """Whether ``text`` is ``:`` and a port number."""
    digits = text[1:]
    return (text.startswith(":") and digits.isascii() and digits.isdigit()
            and len(digits) <= 5 and int(digits) <= 65535)


def same_authority(origin_authority: str, host: str | None) -> bool:
    """Whether an ``Origin``'s authority names the server the ``Host`` header names."""
    if host is None:
        return False
    origin, named = split_authority(origin_authority), split_authority(host)
    return origin is not None and origin == named
