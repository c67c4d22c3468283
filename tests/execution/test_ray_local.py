"""A Ray a command starts for itself listens on loopback only: read from the OS's socket table.

Ray has no login unless its token authentication is on, so a port of it another machine can
reach lets that machine run code as the user. The slow test starts the real Ray as the audit,
``variants make`` and a run do without ``--ray-address`` (``RayExecutor`` and ``RaySuite``
both go through ``connect``), plays one job so a worker exists, and lists every listening
socket of every process of that Ray with psutil.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from types import SimpleNamespace

import psutil
import pytest

from llm_aai.execution.ray_local import NotLoopback, is_loopback, start_local

_DRIVER = """
import json, sys
import ray
from llm_aai.execution import Job
from llm_aai.execution.ray_executor import RayExecutor
from tests.execution.jobs import square

with RayExecutor(1) as executor:
    (outcome,) = executor.run([Job("one", square, (3,))])
    print(json.dumps({"result": outcome.result,
                      "switch": ray._private.ray_constants.ENABLE_RAY_CLUSTER}), flush=True)
    sys.stdin.read()  # the test reads the socket table meanwhile
"""
"""A command's driver: a Ray started here with one job played, kept until stdin closes."""


@pytest.fixture(scope="module")
def local_ray():
    """The processes of one Ray started as a command starts it, and what its driver printed."""
    pytest.importorskip("ray")
    ray_tmp = tempfile.mkdtemp(prefix="rl")  # short: Ray's socket paths must stay < 108
    env = {**os.environ, "RAY_TMPDIR": ray_tmp}
    driver = subprocess.Popen([sys.executable, "-c", _DRIVER], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, env=env)
    try:
        printed = json.loads(driver.stdout.readline() or "null")
        assert printed is not None, "the driver ended before its job did"
        root = psutil.Process(driver.pid)
        yield SimpleNamespace(processes=[root, *root.children(recursive=True)],
                              printed=printed)
    finally:
        driver.stdin.close()
        driver.wait(timeout=60)
        shutil.rmtree(ray_tmp, ignore_errors=True)


def _listening(process) -> list[tuple[str, int, str]]:
    """The sockets ``process`` accepts on: TCP in LISTEN, UDP bound with no peer."""
    try:
        connections = process.net_connections(kind="inet")
    except (psutil.NoSuchProcess, psutil.ZombieProcess):
        return []
    return [(c.laddr.ip, c.laddr.port, "tcp" if c.type == socket.SOCK_STREAM else "udp")
            for c in connections
            if c.status == psutil.CONN_LISTEN or (c.status == psutil.CONN_NONE and not c.raddr)]


@pytest.mark.slow
def test_every_socket_of_a_ray_started_here_is_on_loopback(local_ray):
    assert local_ray.printed["result"] == 9
    sockets = {}
    for process in local_ray.processes:
        for ip, port, kind in _listening(process):
            sockets[f"{process.name()} ({process.pid}) {kind} [{ip}]:{port}"] = ip
    names = {process.name() for process in local_ray.processes}
    assert {"gcs_server", "raylet"} <= names  # the Ray looked at is the one started here
    assert len(sockets) >= 3, sockets  # the GCS, the raylet and the driver at least
    exposed = [where for where, ip in sockets.items() if not is_loopback(ip)]
    assert not exposed, f"listening beyond this machine: {exposed}"


@pytest.mark.slow
def test_the_loopback_switch_is_put_back_after_the_start(local_ray):
    """A cluster joined later in the same process must still get this machine's address."""
    assert local_ray.printed["switch"] is True


@pytest.mark.parametrize(("address", "loopback"), [
    ("127.0.0.1", True), ("127.8.9.10", True), ("::1", True), ("::ffff:127.0.0.1", True),
    ("0.0.0.0", False), ("::", False), ("192.0.2.2", False), ("::ffff:192.0.2.2", False),
    ("fe80::1%eth0", False), ("10.0.0.5", False),
])
def test_is_loopback(address, loopback):
    assert is_loopback(address) is loopback


class _RayTakingAddress:
    """A ``ray`` whose ``init`` gives the node ``address`` (as a Ray without the switch would)."""

    __version__ = "9.9"

    def __init__(self, address: str) -> None:
        self.address = address
        self.calls: list[tuple[str, dict]] = []

    def init(self, **options):
        self.calls.append(("init", options))
        return SimpleNamespace(address_info={"node_ip_address": self.address})

    def shutdown(self):
        self.calls.append(("shutdown", {}))


def test_a_ray_that_takes_a_reachable_address_is_shut_down_and_refused():
    ray = _RayTakingAddress("192.0.2.2")
    with pytest.raises(NotLoopback, match=r"took the node address 192\.0\.2\.2.*--ray-address"):
        start_local(ray, 2, include_dashboard=False)
    assert [name for name, _ in ray.calls] == ["init", "shutdown"]
    assert ray.calls[0][1] == {"address": "local", "num_cpus": 2, "_node_ip_address": "127.0.0.1",
                               "include_dashboard": False}


def test_a_ray_on_loopback_is_kept():
    ray = _RayTakingAddress("127.0.0.1")
    start_local(ray, 1)
    assert [name for name, _ in ray.calls] == ["init"]
