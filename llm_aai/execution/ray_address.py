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
3. Without Ray's TLS, what accepted it must speak HTTP/2, as every gRPC server does: to the
   client's connection preface the server answers with its own, a SETTINGS frame (RFC 9113,
   section 3.4). A web page, Redis, the dashboard's HTTP port or a listener that never answers
   fails here with a message that says what answered; a gRPC client alone reports these as
   one opaque "failed to connect" or a bare deadline.
4. What answers must be Ray: one unary gRPC call, with the same short deadline, to a method
   only Ray serves there. For ``host:port`` it is the GCS's
   ``NodeInfoGcsService/GetClusterId``, the first call Ray's driver makes (and retries once
   a second for minutes where it is not served); for ``ray://host:port`` Ray Client's
   server's ``RayletDriver/ClusterInfo`` with the PING request Ray Client sends while it
   connects. Any other gRPC server answers UNIMPLEMENTED. A cluster with Ray's token
   authentication on answers UNAUTHENTICATED (this check sends no token: joining with it is
   Ray's business), and a method nobody serves with UNIMPLEMENTED, which a server that wants
   credentials for every call does not; so both together count as Ray. An address that is
   the other one of Ray's two ports (``ray://`` written for a GCS or left out for a Ray
   Client server) is named so. With ``RAY_USE_TLS`` the call goes over TLS with the
   certificates Ray's documented variables name (``RAY_TLS_SERVER_CERT``,
   ``RAY_TLS_SERVER_KEY``, ``RAY_TLS_CA_CERT``), as Ray's own gRPC clients make it. Requests
   are raw protobuf bytes, so no module Ray generates is imported; the tests hold them to
   the installed Ray's.
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
    """Fail within seconds unless a Ray cluster answers at ``address``.

    ``auto`` is resolved first (see the module doc). A GCS host that Ray reads as this machine
    (``localhost``, ``127.0.0.1``) is checked at the node address Ray connects to instead. An
    address without a port (``local``) is left to Ray. Each step waits ``timeout`` at most.

    Raises:
        RayUnavailable: Ray (and with it gRPC) is not installed.
        RayUnreachable: ``auto`` finds no cluster, the connection is refused or times out,
            what answers is not Ray, or is the other of Ray's two ports (the message names
            ``--ray-address``, the address and, for ``auto``, where it was found).
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
    service = _CLIENT_SERVER if client else _GCS
    try:
        with socket.create_connection((host, int(port)), timeout=timeout) as connection:
            if not _tls_on():
                _expect_http2(connection, timeout)
        _expect_ray(f"[{host}]:{port}" if ":" in host else f"{host}:{port}", service, timeout)
    except _OtherRayPort as other:
        written = (resolved.address.removeprefix("ray://") if client
                   else f"ray://{resolved.address}")
        raise RayUnreachable(f"--ray-address {resolved}: that is {other.service.name}, not "
                             f"{service.name}; write it {written}") from None
    except _TlsProblem as error:
        raise RayUnreachable(f"--ray-address {resolved}: {error}") from None
    except (_NotGrpc, _NotRay) as error:
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


@dataclass(frozen=True)
class _RayService:
    """One of the two gRPC services a ``--ray-address`` can point at, with a call only it answers.

    Attributes:
        name: how messages name it.
        service: its full gRPC service name (from Ray's ``.proto`` files).
        method: a unary method of it that needs no state and nothing but its request.
        request: the request, serialized protobuf (raw bytes: no generated module needed).
    """

    name: str
    service: str
    method: str
    request: bytes

    @property
    def path(self) -> str:
        """The call's gRPC path."""
        return f"/{self.service}/{self.method}"

    @property
    def unserved_path(self) -> str:
        """A path under the same service that no server has (the control for tokens)."""
        return f"/{self.service}/LlmAaiNoSuchMethod"


_GCS = _RayService("Ray's GCS", "ray.rpc.NodeInfoGcsService", "GetClusterId", b"")
"""What ``host:port`` names: the GCS; ``GetClusterIdRequest`` has no fields."""
_CLIENT_SERVER = _RayService("Ray Client's server", "ray.rpc.RayletDriver", "ClusterInfo",
                            bytes([0x08, 6]))
"""What ``ray://host:port`` names: ``ClusterInfoRequest`` with field 1 (``type``, a varint)
set to ``ClusterInfoType.PING`` (6)."""


class _NotGrpc(Exception):
    """What accepted the connection did not answer as an HTTP/2 server does."""


class _NotRay(Exception):
    """What answered is not the Ray service the address names (the text says why)."""


class _OtherRayPort(Exception):
    """What answered is Ray's other service (``service``): ``ray://`` given or left out wrongly."""

    def __init__(self, service: _RayService) -> None:
        super().__init__(service.name)
        self.service = service


def _expect_ray(target: str, service: _RayService, timeout: float) -> None:
    """Make ``service``'s call at ``target``; return if Ray answered it.

    Raises:
        _OtherRayPort: the other Ray service answered its own call instead.
        _TlsProblem: with Ray's TLS on, its files are missing or the handshake failed.
        _NotRay: anything else, with the gRPC status that came back.
    """
    grpc = _import_grpc()
    with _channel(grpc, target) as channel:
        status = _status(grpc, channel, service.path, service.request, timeout)
        if _is_ray(grpc, channel, service, status, timeout):
            return
        if status.code is grpc.StatusCode.UNAUTHENTICATED:
            raise _NotRay("it wants credentials even for a method nobody serves, which Ray "
                          "does not")
        if status.code is grpc.StatusCode.UNIMPLEMENTED:
            other = _CLIENT_SERVER if service is _GCS else _GCS
            answer = _status(grpc, channel, other.path, other.request, timeout)
            if _is_ray(grpc, channel, other, answer, timeout):
                raise _OtherRayPort(other)
            raise _NotRay(f"a gRPC server without {service.name}'s {service.method}")
        if status.code is grpc.StatusCode.DEADLINE_EXCEEDED:
            raise _NotRay(f"no gRPC answer within {timeout:g} s")
        if status.code is grpc.StatusCode.UNAVAILABLE and _tls_on():
            raise _TlsProblem("no TLS connection with the files Ray's variables "
                              f"{', '.join(_TLS_FILES)} name ({status.details})")
        raise _NotRay(f"gRPC {status.code.name}: {status.details}")


def _is_ray(grpc: Any, channel: Any, service: _RayService, status: _Status,
            timeout: float) -> bool:
    """Whether ``status``, the answer to ``service``'s call, came from that Ray service.

    OK does; so does UNAUTHENTICATED (Ray's token authentication) from a server that answers
    a method nobody serves with UNIMPLEMENTED, as Ray checks the token only for methods it has.
    """
    if status.code is grpc.StatusCode.OK:
        return True
    if status.code is not grpc.StatusCode.UNAUTHENTICATED:
        return False
    control = _status(grpc, channel, service.unserved_path, b"", timeout)
    return control.code is grpc.StatusCode.UNIMPLEMENTED


@dataclass(frozen=True)
class _Status:
    """How a gRPC call ended: its ``grpc.StatusCode`` and the server's or channel's words."""

    code: Any
    details: str


def _status(grpc: Any, channel: Any, path: str, request: bytes, timeout: float) -> _Status:
    """The gRPC status of one unary call (bytes in, bytes out), its details on one line."""
    try:
        channel.unary_unary(path)(request, timeout=timeout)
    except grpc.RpcError as error:
        details = " ".join(str(error.details() or "").split())
        return _Status(error.code(), details.removeprefix(_CHANNEL_PREFIX))
    return _Status(grpc.StatusCode.OK, "")


_CHANNEL_PREFIX = "failed to connect to all addresses; last error: "
"""How gRPC's channel begins every failure to connect (one address here: left out)."""


def _channel(grpc: Any, target: str) -> Any:
    """A channel to ``target``, over TLS with Ray's certificates when Ray's TLS is on.

    It goes straight there (no HTTP proxy from the environment), as the TCP check did.
    """
    options = [("grpc.enable_http_proxy", 0)]
    if not _tls_on():
        return grpc.insecure_channel(target, options=options)
    certificate, key, authority = (_read_tls_file(name) for name in _TLS_FILES)
    credentials = grpc.ssl_channel_credentials(root_certificates=authority, private_key=key,
                                               certificate_chain=certificate)
    return grpc.secure_channel(target, credentials, options=options)


_TLS_FILES = ("RAY_TLS_SERVER_CERT", "RAY_TLS_SERVER_KEY", "RAY_TLS_CA_CERT")
"""Ray's variables naming its TLS certificate, key and certificate authority (PEM files)."""


def _read_tls_file(variable: str) -> bytes:
    """The PEM file Ray's TLS variable ``variable`` names.

    Raises:
        _TlsProblem: the variable is not set or its file cannot be read (named).
    """
    path = os.environ.get(variable, "")
    if not path:
        raise _TlsProblem(f"RAY_USE_TLS is on but {variable} is not set (Ray's TLS needs "
                              f"{', '.join(_TLS_FILES)})")
    try:
        return Path(path).read_bytes()
    except OSError as error:
        raise _TlsProblem(f"{variable} {path}: {error.strerror or error}") from None


class _TlsProblem(Exception):
    """Ray's TLS is on but its files are missing, or no TLS connection is made with them."""


def _import_grpc() -> Any:
    """The ``grpc`` module (installed with Ray)."""
    try:
        import grpc
    except ImportError:
        raise RayUnavailable(INSTALL_HINT) from None
    return grpc


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
                raise _NotGrpc("it closed the connection without an HTTP/2 answer, as a server "
                               "expecting TLS does: with Ray's TLS set RAY_USE_TLS=1 and its "
                               "RAY_TLS_* files")
            header += chunk
    except TimeoutError:
        raise _NotGrpc(f"no HTTP/2 answer within {timeout:g} s") from None
    if header[3] != _SETTINGS:
        shown = header.decode("ascii", "replace").split("\r")[0].strip()
        raise _NotGrpc(f"it answered {shown!r}, not HTTP/2" if shown.isprintable() and shown
                       else "it answered, but not HTTP/2")
