"""``--ray-address`` checked in seconds: ``auto`` resolved as Ray resolves it, and an address
where something other than Ray (a web page, a silent port, another gRPC server) accepts
connections refused; real Ray clusters, plain and with token authentication, TLS and a Ray
Client server, pass."""

from __future__ import annotations

import http.server
import secrets
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from llm_aai.execution.ray_address import (
    RayUnreachable,
    check_address,
    ray_address_file,
    resolve_address,
)
from tests.helpers.ray_heads import ray_head


@pytest.fixture
def no_cluster_recorded(monkeypatch, tmp_path):
    """Ray's lookup for ``auto`` sees an empty temporary folder and no RAY_ADDRESS (so no
    cluster another test or person on this machine started is found)."""
    monkeypatch.setenv("RAY_TMPDIR", str(tmp_path / "raytmp"))
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    return tmp_path / "raytmp" / "ray" / "ray_current_cluster"


def test_auto_is_looked_up_where_ray_looks(monkeypatch, tmp_path):
    """Ray's own path for its address file (read in Ray's source; private, so checked here
    against the installed Ray, which would move it under our feet)."""
    utils = pytest.importorskip("ray._common.utils")
    for variables in ({"RAY_TMPDIR": str(tmp_path / "a")}, {"TMPDIR": str(tmp_path / "b")}, {}):
        for name in ("RAY_TMPDIR", "TMPDIR"):
            monkeypatch.delenv(name, raising=False)
        for name, value in variables.items():
            monkeypatch.setenv(name, value)
        assert str(ray_address_file()) == utils.get_ray_address_file(None)


def test_auto_is_ray_address_then_the_latest_ray_start(monkeypatch, no_cluster_recorded):
    no_cluster_recorded.parent.mkdir(parents=True)
    no_cluster_recorded.write_text("10.0.0.7:6379\n")
    found = resolve_address("auto")
    assert (found.address, found.source) == ("10.0.0.7:6379", str(no_cluster_recorded))
    monkeypatch.setenv("RAY_ADDRESS", "ray://10.0.0.8:10001")
    found = resolve_address("auto")
    assert (found.address, found.source) == ("ray://10.0.0.8:10001", "RAY_ADDRESS")
    assert str(found) == "auto (ray://10.0.0.8:10001, from RAY_ADDRESS)"
    assert resolve_address("10.0.0.9:6379").address == "10.0.0.9:6379"  # not auto: as given


def test_auto_with_no_cluster_to_find_fails_at_once_naming_the_flag(no_cluster_recorded):
    started = time.monotonic()
    with pytest.raises(RayUnreachable) as refused:
        check_address("auto")
    assert time.monotonic() - started < 1
    message = str(refused.value)
    assert message.startswith("--ray-address auto: no Ray cluster to join (RAY_ADDRESS is not "
                              "set and no `ray start` recorded one in ")
    assert str(no_cluster_recorded) in message and "\n" not in message


class _Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (the standard library's name)
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def web_server():
    """An HTTP/1.1 server on every interface (a local host is checked at the node's address)."""
    server = http.server.ThreadingHTTPServer(("0.0.0.0", 0), _Page)  # noqa: S104
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def silent_listener():
    """A port that accepts connections and never says a word."""
    with socket.socket() as listener:
        listener.bind(("0.0.0.0", 0))  # noqa: S104
        listener.listen(8)
        yield f"127.0.0.1:{listener.getsockname()[1]}"


def test_a_web_server_is_not_taken_for_a_cluster(web_server):
    pytest.importorskip("ray")
    started = time.monotonic()
    with pytest.raises(RayUnreachable) as refused:
        check_address(web_server)
    assert time.monotonic() - started < 5
    message = str(refused.value)
    assert message.startswith(f"--ray-address {web_server}: something answers there but it "
                              "is not a Ray cluster (it answered '")
    assert "not HTTP/2); give the address `ray start --head` printed" in message


def test_a_listener_that_never_answers_is_not_taken_for_a_cluster(silent_listener):
    pytest.importorskip("ray")
    with pytest.raises(RayUnreachable, match=r"it is not a Ray cluster \(no HTTP/2 answer "
                                             r"within 1 s\)"):
        check_address(silent_listener, timeout=1.0)


def test_auto_from_ray_address_is_checked_and_says_where_it_came_from(monkeypatch, web_server,
                                                                      no_cluster_recorded):
    pytest.importorskip("ray")
    monkeypatch.setenv("RAY_ADDRESS", web_server)
    with pytest.raises(RayUnreachable, match=rf"^--ray-address auto \({web_server}, from "
                                             r"RAY_ADDRESS\): something answers there but"):
        check_address("auto")


def test_the_calls_are_the_installed_ray_s():
    """The probes are raw bytes and paths, so no generated module of Ray's is imported at run
    time; here they are held to the installed Ray's protobuf and gRPC modules."""
    pytest.importorskip("ray")
    from ray.core.generated import (
        gcs_service_pb2,
        gcs_service_pb2_grpc,
        ray_client_pb2,
        ray_client_pb2_grpc,
    )

    from llm_aai.execution.ray_address import _CLIENT_SERVER, _GCS

    assert _GCS.request == gcs_service_pb2.GetClusterIdRequest().SerializeToString()
    assert _CLIENT_SERVER.request == ray_client_pb2.ClusterInfoRequest(
        type=ray_client_pb2.ClusterInfoType.PING).SerializeToString()
    for service, module, servicer in ((_GCS, gcs_service_pb2, gcs_service_pb2_grpc),
                                      (_CLIENT_SERVER, ray_client_pb2, ray_client_pb2_grpc)):
        short = service.service.rpartition(".")[2]
        assert module.DESCRIPTOR.services_by_name[short].full_name == service.service
        assert hasattr(getattr(servicer, f"{short}Servicer"), service.method)


class _RefuseAll:
    """A server interceptor that wants a token for every call, served or not."""

    def __init__(self, grpc):
        self._grpc = grpc

    def intercept_service(self, continuation, details):
        grpc = self._grpc

        def refuse(request, context):
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "no token")

        return grpc.unary_unary_rpc_method_handler(refuse)


def _grpc_server(grpc, *, interceptors=()):
    """A plain grpcio server on every interface serving one unrelated echo method."""
    from concurrent import futures

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2),
                         interceptors=list(interceptors))
    echo = grpc.unary_unary_rpc_method_handler(lambda request, context: request)
    server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler(
        "tests.Echo", {"Say": echo})])
    port = server.add_insecure_port("0.0.0.0:0")
    server.start()
    return server, port


@pytest.fixture
def other_grpc_server():
    """A gRPC server that is not Ray (it would pass an HTTP/2-only check)."""
    pytest.importorskip("ray")
    grpc = pytest.importorskip("grpc")
    server, port = _grpc_server(grpc)
    yield f"127.0.0.1:{port}"
    server.stop(grace=None)


@pytest.mark.parametrize(("scheme", "missing"), [
    ("", "Ray's GCS's GetClusterId"), ("ray://", "Ray Client's server's ClusterInfo")])
def test_another_grpc_server_is_not_taken_for_a_cluster(other_grpc_server, scheme, missing):
    """Ray's driver would retry it for minutes; the check refuses it in a moment."""
    address = scheme + other_grpc_server
    started = time.monotonic()
    with pytest.raises(RayUnreachable) as refused:
        check_address(address)
    assert time.monotonic() - started < 5
    assert str(refused.value) == (
        f"--ray-address {address}: something answers there but it is not a Ray cluster (a gRPC "
        f"server without {missing}); give the address `ray start --head` printed (its GCS "
        "port, 6379 by default) or ray://host:10001")


def test_a_grpc_server_wanting_a_token_for_everything_is_not_taken_for_ray():
    """Ray with token authentication refuses its own calls unauthenticated but not unknown
    methods; a server refusing everything unauthenticated is not Ray."""
    pytest.importorskip("ray")
    grpc = pytest.importorskip("grpc")
    server, port = _grpc_server(grpc, interceptors=[_RefuseAll(grpc)])
    try:
        with pytest.raises(RayUnreachable, match=r"not a Ray cluster \(it wants credentials "
                                                 r"even for a method nobody serves"):
            check_address(f"127.0.0.1:{port}")
    finally:
        server.stop(grace=None)


@pytest.mark.slow
def test_the_real_cluster_passes_in_a_moment(ray_cluster):
    host, port = ray_cluster.address.rsplit(":", 1)
    for address in (ray_cluster.address, f"localhost:{port}"):
        started = time.monotonic()
        check_address(address)
        assert time.monotonic() - started < 2, address


@pytest.mark.slow
def test_ray_s_gcs_written_as_ray_client_is_named_so(ray_cluster):
    with pytest.raises(RayUnreachable) as refused:
        check_address(f"ray://{ray_cluster.address}")
    assert str(refused.value) == (f"--ray-address ray://{ray_cluster.address}: that is Ray's "
                                  "GCS, not Ray Client's server; write it "
                                  f"{ray_cluster.address}")


def _certificates(folder: Path, host: str) -> dict[str, str]:
    """A certificate authority and a server certificate for ``host`` and loopback (openssl),
    as Ray's TLS variables name them."""
    def openssl(*arguments):
        subprocess.run(["openssl", *arguments], cwd=folder, check=True, capture_output=True)

    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out",
            "ca.crt", "-days", "1", "-subj", "/CN=llm-aai test CA")
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out",
            "server.csr", "-subj", "/CN=ray")
    (folder / "names.cnf").write_text(f"subjectAltName=IP:{host},IP:127.0.0.1\n")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
            "-CAcreateserial", "-out", "server.crt", "-days", "1", "-extfile", "names.cnf")
    return {"RAY_USE_TLS": "1", "RAY_TLS_SERVER_CERT": str(folder / "server.crt"),
            "RAY_TLS_SERVER_KEY": str(folder / "server.key"),
            "RAY_TLS_CA_CERT": str(folder / "ca.crt")}


@pytest.fixture(scope="module")
def secured_cluster(tmp_path_factory):
    """A real one-node Ray cluster with token authentication and TLS on and a Ray Client
    server, in a process of its own (both are process-wide settings of Ray): its GCS address,
    its client address and the TLS variables (the token stays in that process)."""
    ray = pytest.importorskip("ray")
    if shutil.which("openssl") is None:
        pytest.skip("openssl makes the test certificates")
    tls = _certificates(tmp_path_factory.mktemp("tls"), ray.util.get_node_ip_address())
    with ray_head({**tls, "RAY_AUTH_MODE": "token",
                   "RAY_AUTH_TOKEN": secrets.token_hex(32)}) as head:
        yield head.gcs, head.client, tls


@pytest.mark.slow
def test_a_cluster_with_tokens_and_tls_passes_and_its_client_server_too(secured_cluster,
                                                                       monkeypatch):
    """No token is sent: Ray's answer that one is missing is Ray's answer. The calls go over
    TLS with the certificates Ray's variables name."""
    gcs, client, tls = secured_cluster
    monkeypatch.delenv("RAY_AUTH_MODE", raising=False)
    monkeypatch.delenv("RAY_AUTH_TOKEN", raising=False)
    for name, value in tls.items():
        monkeypatch.setenv(name, value)
    for address in (gcs, client):
        started = time.monotonic()
        check_address(address)
        assert time.monotonic() - started < 2, address
    with pytest.raises(RayUnreachable, match=rf"^--ray-address {client.removeprefix('ray://')}"
                                             r": that is Ray Client's server, not Ray's GCS; "
                                             rf"write it {client}$"):
        check_address(client.removeprefix("ray://"))


@pytest.mark.slow
def test_a_tls_cluster_checked_with_another_ca_says_tls_failed(secured_cluster, monkeypatch,
                                                               tmp_path):
    gcs, _, tls = secured_cluster
    for name, value in tls.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("RAY_TLS_CA_CERT", _certificates(tmp_path, "10.9.9.9")["RAY_TLS_CA_CERT"])
    with pytest.raises(RayUnreachable, match=rf"^--ray-address {gcs}: no TLS connection with "
                                             r"the files Ray's variables RAY_TLS_SERVER_CERT, "
                                             r"RAY_TLS_SERVER_KEY, RAY_TLS_CA_CERT name \(.*"
                                             r"CERTIFICATE_VERIFY_FAILED"):
        check_address(gcs)


@pytest.mark.slow
def test_a_tls_cluster_checked_without_ray_s_tls_says_what_to_set(secured_cluster, monkeypatch):
    gcs, _, _ = secured_cluster
    monkeypatch.delenv("RAY_USE_TLS", raising=False)
    with pytest.raises(RayUnreachable, match=r"it closed the connection without an HTTP/2 "
                                             r"answer, as a server expecting TLS does: with "
                                             r"Ray's TLS set RAY_USE_TLS=1 and its "
                                             r"RAY_TLS_\* files\)"):
        check_address(gcs)


def test_ray_s_tls_without_its_files_is_named(monkeypatch, other_grpc_server):
    monkeypatch.setenv("RAY_USE_TLS", "1")
    monkeypatch.delenv("RAY_TLS_SERVER_CERT", raising=False)
    with pytest.raises(RayUnreachable, match=rf"^--ray-address {other_grpc_server}: RAY_USE_TLS"
                                             r" is on but RAY_TLS_SERVER_CERT is not set \("):
        check_address(other_grpc_server)


def test_a_run_pointed_at_another_grpc_server_exits_2_with_one_line(other_grpc_server,
                                                                     testbed_dir, tmp_path):
    """The command's side: the refusal is its whole answer, before the run's folder."""
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "llm_aai.run", "--model", "heuristic", "--tasks", "01-04-03",
         "--out", str(tmp_path / "run"), "--no-progress", "--arenas-dir", str(testbed_dir),
         "--executor", "ray", "--ray-address", other_grpc_server],
        capture_output=True, text=True, timeout=120)
    assert time.monotonic() - started < 60
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"error: --ray-address {other_grpc_server}: something answers there but it is not a Ray "
        "cluster (a gRPC server without Ray's GCS's GetClusterId); give the address `ray start "
        "--head` printed (its GCS port, 6379 by default) or ray://host:10001"]
    assert not (tmp_path / "run").exists()
