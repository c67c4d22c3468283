"""A Ray started on this machine for one command, reachable from this machine only.

Ray has one setting for where its servers listen: the node's address. Its GCS, raylet,
object manager and every worker's (and the driver's) gRPC server listen on loopback when
that address is ``127.0.0.1``, and on every interface otherwise (Ray 2.60, read from the
socket table; its runtime-env agent listens on the node's address). On Linux Ray picks the
address of the interface that routes outwards, and it turns a loopback ``_node_ip_address``
given to ``ray.init`` into that same outward address (``resolve_ip_for_localhost`` in Ray
2.x's ``ray._private.services``), so a plain ``ray.init()`` serves its cluster to the
whole network. Anyone who reaches those ports could submit jobs, that is run code as the
user, unless Ray's token authentication is on (the default for a new local Ray only in
recent Ray; ``RAY_AUTH_MODE=disabled`` turns it off).

A Ray a command starts for itself needs no other machine, so it is started on loopback: Ray
already does so on macOS and Windows, where it reads a switch
(``ray._private.ray_constants.ENABLE_RAY_CLUSTER``, false there) at the moment it works out
the node's address. That switch is turned off for the duration of the start only and put
back, so a cluster joined later in the same process is unaffected. The address Ray ended up
with is then checked: a Ray that is not on loopback is shut down and refused, not used.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from llm_aai.execution.ray_address import RayUnavailable
from llm_aai.hosts import LOOPBACK, is_loopback

__all__ = ["LOOPBACK", "NotLoopback", "is_loopback", "start_local"]



class NotLoopback(RayUnavailable):
    """A Ray started here took an address other machines can reach (the message names it)."""


def start_local(ray: Any, cpus: int, **options: Any) -> None:
    """``ray.init`` a new Ray here with ``cpus`` CPUs, its servers on loopback only.

    Args:
        ray: the ``ray`` module.
        cpus: the node's CPUs.
        options: more of ``ray.init``'s keyword arguments.

    Raises:
        NotLoopback: Ray took another node address (then it has been shut down again).
    """
    with _loopback_node():
        context = ray.init(address="local", num_cpus=cpus, _node_ip_address=LOOPBACK,
                           **options)
    address = context.address_info["node_ip_address"]
    if not is_loopback(address):
        ray.shutdown()
        raise NotLoopback(
            f"--executor ray: the Ray started here took the node address {address}, where "
            "other machines could reach it and submit jobs, not 127.0.0.1; this version of "
            f"Ray ({ray.__version__}) is not supported without a cluster: start one with "
            "`ray start --head --node-ip-address ADDRESS` on a private network and give "
            "--ray-address (docs/ray.md)")


@contextmanager
def _loopback_node() -> Iterator[None]:
    """Make Ray take loopback as this machine's node address while the block runs.

    A Ray without the switch is left as it is: ``start_local``'s check then refuses it.
    """
    try:
        constants = importlib.import_module("ray._private.ray_constants")
    except ImportError:
        constants = None
    if not hasattr(constants, "ENABLE_RAY_CLUSTER"):
        yield
        return
    before = constants.ENABLE_RAY_CLUSTER
    constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        constants.ENABLE_RAY_CLUSTER = before
