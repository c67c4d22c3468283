"""Which ``Host`` header a server on the loopback answers: one naming it, never another site.

Any web page can have the browser send requests to 127.0.0.1 by pointing its own name there
(DNS rebinding); such a request still names the page's site in ``Host``. So a server bound to
a loopback address answers only requests that name it by a loopback name: ``localhost`` or
the address it is bound to, with any port (an SSH tunnel or a port forward changes the port,
not the name). A server bound elsewhere is meant to be reached by other names and takes any.

Both servers of the project use it: the viewer's (``llm_aai.view.serve``) and the human-play
server (``llm_aai.human.server``), which hands ``LOOPBACK_NAMES`` to Starlette.
"""

from __future__ import annotations

import ipaddress
import re

__all__ = ["LOCALHOST", "LOOPBACK", "LOOPBACK_NAMES", "host_allowed", "host_name",
           "loopback_names"]

LOOPBACK = "127.0.0.1"
"""The address the project's servers bind by default."""
LOCALHOST = "localhost"
LOOPBACK_NAMES = (LOOPBACK, LOCALHOST)
"""The names a server on 127.0.0.1 answers to (any other is refused: DNS rebinding)."""

_HOST = re.compile(r"(?:\[(?P<literal>[0-9A-Fa-f:.]+)\]|(?P<name>[A-Za-z0-9.-]+))"
                   r"(?::(?P<port>[0-9]{1,5}))?")


def loopback_names(bound: str) -> frozenset[str] | None:
    """The host names a server bound to ``bound`` answers to; None when it takes any.

    ``bound`` is the address the socket was bound to (``127.0.0.1``, ``::1``, ``0.0.0.0``)
    or a name (``localhost``). On the loopback the names are ``localhost`` and the address
    itself (IPv6 in its compressed form, as ``host_name`` gives it).
    """
    name = _canonical(bound.strip("[]"))
    if name == LOCALHOST:
        return frozenset({LOCALHOST, LOOPBACK, "::1"})
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return None
    return frozenset({LOCALHOST, str(address)}) if address.is_loopback else None


def host_name(header: str | None) -> str | None:
    """The host a ``Host`` header names, without its port, or None when it is malformed.

    ``127.0.0.1:8000`` -> ``127.0.0.1``; ``[0:0::1]:8000`` -> ``::1``; ``LocalHost.`` ->
    ``localhost``. Anything but a name or a bracketed IPv6 literal with an optional port of
    digits (user info, a path, spaces, an empty port, a port above 65535) is None.
    """
    if header is None:
        return None
    match = _HOST.fullmatch(header)
    if match is None or (match["port"] is not None and int(match["port"]) > 65535):
        return None
    if match["literal"] is not None:
        try:
            return str(ipaddress.IPv6Address(match["literal"]))
        except ValueError:
            return None
    return _canonical(match["name"]) or None


def host_allowed(header: str | None, names: frozenset[str] | None) -> bool:
    """Whether a request with this ``Host`` header may be answered by a server of ``names``.

    ``names`` is what ``loopback_names`` gave: None takes any header, even none; otherwise
    the header must be well formed and name one of them (a missing header is refused).
    """
    return names is None or host_name(header) in names


def _canonical(name: str) -> str:
    """Host names compare without case and without the root's trailing dot."""
    return name.lower().removesuffix(".")
