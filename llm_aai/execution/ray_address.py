"""Ray itself and where ``--ray-address`` points, checked in seconds before the driver joins.

Ray (an optional extra) is imported only through ``import_ray``, which says how to install it.

Ray's driver does not give up on a cluster that does not answer: it retries the address for
minutes (20 tries of about 10 s each in Ray 2.x, over 200 s measured) before it raises, so a
mistyped ``--ray-address``, a cluster that is down or ``auto`` with no cluster to find would
look like a hung command. Ray's own connect timeouts are process-wide settings read when Ray
starts (``RAY_gcs_rpc_server_connect_timeout_s`` and the number of tries), which would also
cut the wait for a real cluster's head that is slow to recover; so the command looks first,
with its own short timeouts, and changes nothing of Ray's:

1. ``auto`` is resolved as Ray documents it for ``ray.init(address="auto")``: the
   ``RAY_ADDRESS`` environment variable if set, else the address the latest ``ray start`` on
   this machine wrote into ``ray_current_cluster`` in Ray's temporary folder
   (``$RAY_TMPDIR/ray``, else ``$TMPDIR/ray`` on Linux, else ``/tmp/ray``; read in Ray 2.60's
   ``ray._private.services.get_ray_address_from_environment`` and
   ``ray._common.utils.get_ray_address_file``). Ray's undocumented last resort, joining a
   Ray it finds running on this machine by scanning its processes, is not followed: on a
   machine where several people start Rays it joins someone else's, so ``auto`` with neither
   is refused.
2. A TCP connection to the address's port (the GCS's, or the Ray Client server's for
   ``ray://``) must be accepted.
3. What accepted it must speak HTTP/2, as every gRPC server (Ray's GCS and its client server
   are gRPC servers) does: to the client's connection preface the server answers with its
   own, a SETTINGS frame (RFC 9113, section 3.4). A web page, Redis, the dashboard's HTTP port
   or a listener that never answers fails here. This is the protocol's public contract, not
   one of Ray's private calls; it does not tell Ray's GCS from another gRPC server (such an
   address still waits for Ray's retries), and with Ray's TLS on (``RAY_USE_TLS``) the GCS
   expects a TLS handshake first, so only steps 1 and 2 are done.
"""

from __future__ import annotations

import os
import socket
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["AUTO", "CONNECT_TIMEOUT_S", "INSTALL_HINT", "RayUnavailable", "RayUnreachable",
           "ResolvedAddress", "check_address", "import_ray", "ray_address_file",
           "resolve_address"]

INSTALL_HINT = "--executor ray needs Ray: pip install 'llm-aai[ray]' (or pip install ray)"
"""What to do when Ray is not installed."""

CONNECT_TIMEOUT_S = 5.0
"""How long a cluster address may take to accept a connection, and then to answer the
HTTP/2 preface, before it counts as down."""

AUTO = "auto"
"""The address that asks for the cluster Ray can find by itself."""


class RayUnavailable(RuntimeError):
    """Ray cannot be used: it is not installed, or no cluster answers (the message says which)."""


class RayUnreachable(RayUnavailable):
    """Nothing that is a Ray cluster answers at the address given (``--ray-address``)."""


def import_ray() -> Any:
    """The ``ray`` module.

    Raises:
        RayUnavailable: it is not installed.
    """
    try:
        import ray
    except ImportError:
        raise RayUnavailable(INSTALL_HINT) from None
    return ray


@dataclass(frozen=True)
class ResolvedAddress:
    """An address as given and the one it stands for.

    Attributes:
        given: what ``--ray-address`` said (``auto``, ``host:6379``, ``ray://host:10001``).
        address: the address to check (``given`` itself unless it is ``auto``).
        source: where ``auto`` was found (``RAY_ADDRESS`` or the address file); "" otherwise.
    """

    given: str
    address: str
    source: str = ""

    def __str__(self) -> str:
        if not self.source:
            return self.given
        return f"{self.given} ({self.address}, from {self.source})"


def ray_address_file() -> Path:
    """Where ``ray start`` records the latest cluster started on this machine (Ray 2.x)."""
    if os.environ.get("RAY_TMPDIR"):
        system_temp = os.environ["RAY_TMPDIR"]
    elif sys.platform.startswith("linux") and os.environ.get("TMPDIR"):
        system_temp = os.environ["TMPDIR"]
    else:
        system_temp = "/tmp"  # noqa: S108 (Ray's own default, not a file of ours)
    return Path(system_temp) / "ray" / "ray_current_cluster"


def resolve_address(given: str) -> ResolvedAddress:
    """The address ``given`` stands for: ``auto`` resolved as the module doc says.

    Raises:
        RayUnreachable: ``auto`` and neither ``RAY_ADDRESS`` nor an address file (the message
            names ``--ray-address`` and both places looked in).
    """
    if given != AUTO:
        return ResolvedAddress(given, given)
    from_environment = os.environ.get("RAY_ADDRESS", "").strip()
    if from_environment and from_environment != AUTO:
        return ResolvedAddress(given, from_environment, "RAY_ADDRESS")
    recorded = ray_address_file()
    try:
        address = recorded.read_text(encoding="utf-8").strip()
    except (FileNotFoundError, NotADirectoryError):
        address = ""
    if address:
        return ResolvedAddress(given, address, str(recorded))
    raise RayUnreachable(f"--ray-address auto: no Ray cluster to join (RAY_ADDRESS is not set "
                         f"and no `ray start` recorded one in {recorded}); give the cluster's "
                         "address, or leave --ray-address out to start Ray here")


def check_address(address: str | None, timeout: float = CONNECT_TIMEOUT_S) -> None:
    """Fail within seconds unless something that speaks gRPC answers at a cluster ``address``.

    ``auto`` is resolved first (see the module doc). A GCS host that Ray reads as this machine
    (``localhost``, ``127.0.0.1``) is checked at the node address Ray connects to instead. An
    address without a port (``local``) is left to Ray.

    Raises:
        RayUnreachable: ``auto`` finds no cluster, the connection is refused or times out, or
            what answers does not speak HTTP/2 (the message names ``--ray-address``, the
            address and, for ``auto``, where it was found).
    """
    if address is None:
        return
    resolved = resolve_address(address)
    client = resolved.address.startswith("ray://")
    host, _, port = resolved.address.removeprefix("ray://").rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit():
        return
    if host in _THIS_MACHINE and not client:
        host = import_ray().util.get_node_ip_address()
    try:
        with socket.create_connection((host, int(port)), timeout=timeout) as connection:
            if not _tls_on():
                _expect_http2(connection, timeout)
    except _NotGrpc as error:
        raise RayUnreachable(f"--ray-address {resolved}: something answers there but it is not "
                             f"a Ray cluster ({error}); give the address `ray start --head` "
                             "printed (its GCS port, 6379 by default) or ray://host:10001"
                             ) from None
    except OSError as error:
        why = "no answer" if isinstance(error, TimeoutError) else error.strerror or str(error)
        raise RayUnreachable(f"--ray-address {resolved}: no Ray cluster answers there ({why}); "
                             "give the address `ray start --head` printed, or leave "
                             "--ray-address out to start Ray here") from None


_THIS_MACHINE = frozenset({"localhost", "127.0.0.1", "::1"})
"""Hosts Ray replaces with this machine's node address before it connects."""

_CLIENT_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
"""HTTP/2's fixed connection preface followed by an empty SETTINGS frame (RFC 9113, 3.4)."""
_SETTINGS = 4
"""The type of the frame a server's preface must start with."""


class _NotGrpc(Exception):
    """What accepted the connection did not answer as an HTTP/2 server does."""


def _tls_on() -> bool:
    """Whether Ray's gRPC runs over TLS (then a plain-text preface gets no HTTP/2 answer)."""
    return os.environ.get("RAY_USE_TLS", "0").lower() in ("1", "true")


def _expect_http2(connection: socket.socket, timeout: float) -> None:
    """Send HTTP/2's client preface and read the server's first frame header (9 bytes).

    Raises:
        _NotGrpc: no frame header came within ``timeout`` seconds, or not a SETTINGS frame.
        OSError: the connection broke.
    """
    connection.settimeout(timeout)
    connection.sendall(_CLIENT_PREFACE)
    header = b""
    try:
        while len(header) < 9:
            chunk = connection.recv(9 - len(header))
            if not chunk:
                raise _NotGrpc("it closed the connection without an HTTP/2 answer")
            header += chunk
    except TimeoutError:
        raise _NotGrpc(f"no HTTP/2 answer within {timeout:g} s") from None
    if header[3] != _SETTINGS:
        shown = header.decode("ascii", "replace").split("\r")[0].strip()
        raise _NotGrpc(f"it answered {shown!r}, not HTTP/2" if shown.isprintable() and shown
                       else "it answered, but not HTTP/2")
