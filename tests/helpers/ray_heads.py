"""A Ray head with a Ray Client server, in a process of its own, as ``ray start --head
--ray-client-server-port`` gives a user: for tests that join it as a user does, over
``ray://`` or at its GCS address, from a command in another process."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

_HEAD = """
import sys
from ray.cluster_utils import Cluster
cluster = Cluster(initialize_head=True, head_node_args={
    "num_cpus": int(sys.argv[2]), "object_store_memory": 100 * 1024 * 1024,
    "include_dashboard": False, "ray_client_server_port": int(sys.argv[1])})
print(cluster.address, flush=True)
sys.stdin.read()
cluster.shutdown()
"""
"""A one-node cluster that lives until its standard input closes."""


@dataclass(frozen=True)
class RayHead:
    """A running head: its GCS address (``HOST:PORT``) and its Ray Client address."""

    gcs: str
    client: str


def free_port() -> int:
    """A loopback port nobody listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def ray_head(env: dict[str, str] | None = None, *, cpus: int = 1,
             cwd: Path | None = None) -> Iterator[RayHead]:
    """Start a one-node Ray head with a Ray Client server; stop it on leaving.

    Args:
        env: variables added to this process's for the head (and so its workers): e.g.
            Ray's TLS or token settings, process-wide in Ray, which is why it is a process.
        cpus: the node's CPUs.
        cwd: the head's folder, which its workers run in (a user's command runs elsewhere).
    """
    client_port = free_port()
    ray_tmp = tempfile.mkdtemp(prefix="rt")  # short: Ray's socket paths must stay < 108
    variables = {**os.environ, **(env or {}), "RAY_TMPDIR": ray_tmp,
                 "RAY_USAGE_STATS_ENABLED": "0"}
    head = subprocess.Popen([sys.executable, "-c", _HEAD, str(client_port), str(cpus)],
                            env=variables, cwd=cwd, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        address = head.stdout.readline().strip()
        assert address, "the Ray head did not start"
        deadline = time.monotonic() + 30  # its client server comes up after the head returns
        while True:
            try:
                socket.create_connection(("127.0.0.1", client_port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "Ray Client's server did not start"
                time.sleep(0.2)
        yield RayHead(address, f"ray://127.0.0.1:{client_port}")
    finally:
        head.stdin.close()
        try:
            head.wait(timeout=60)
        except subprocess.TimeoutExpired:
            head.kill()
            head.wait()
        shutil.rmtree(ray_tmp, ignore_errors=True)
