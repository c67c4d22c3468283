"""Which holders of the cluster's provider slots Ray already knows to be gone.

A slot of the ``ProviderSlots`` actor (``llm_aai.runner.ray_services``) is a lease of the
call's timeout and a margin: a worker that dies holding one never gives it back, and the
lease alone would keep the slot for minutes at the default two-minute timeout. Ray learns of
such a death sooner, and the actor asks it while a call waits for a slot:

* **a node lost** (its raylet killed, its machine gone): ``ray.nodes()``, Ray's public view
  of the cluster, marks it not alive once the GCS's health checks have missed it (about 13 s
  after its raylet was killed, with Ray 2.60's defaults);
* **a worker process lost on a live node** (killed, crashed): the GCS's worker table marks it
  not alive within half a second. Ray reads that table only through its private global state
  (``ray._private.state``; its public state API, ``ray.util.state.list_workers``, goes
  through the dashboard and fails without one, as on the test cluster). So the lookup is
  tried once at start; when this Ray lacks it, worker deaths are left to the lease, and
  ``worker_check`` says why.

Only a holder Ray positively reports gone is given up: a node or a worker it does not know
(an id it never saw, one it has forgotten) counts as alive, and its lease still bounds it.
Each look costs one GCS request for the nodes and one per holder's worker (about a
millisecond each, measured on the two-node test cluster).
"""

from __future__ import annotations

from typing import Any

from llm_aai.execution.ray_executor import import_ray

__all__ = ["CHECK_EVERY_S", "HolderLiveness"]

CHECK_EVERY_S = 1.0
"""How often a call waiting for a slot has Ray asked whether the slots' holders live."""


class HolderLiveness:
    """Asks Ray whether the holders of slots (their ``node_id`` and ``worker_id``) are gone.

    Made inside the actor: it reads the cluster the actor joined.
    """

    def __init__(self) -> None:
        self._workers: Any = None
        self.worker_check = "on"
        try:
            from ray._private import state
            from ray.core.generated import gcs_pb2

            accessor = state.state._connect_and_get_accessor()
            self._worker_id = import_ray().WorkerID.from_hex
            self._workers = accessor.get_worker_info
            self._parse = gcs_pb2.WorkerTableData.FromString
        except (ImportError, AttributeError) as error:  # Ray's private layout changed
            self.worker_check = f"off, left to the lease ({type(error).__name__}: {error})"

    def gone(self, holders: list[dict[str, Any]]) -> list[str | None]:
        """For each holder, why Ray knows it is gone (``"node"``, ``"worker"``) or None."""
        if not holders:
            return []
        dead_nodes = {node["NodeID"] for node in import_ray().nodes() if not node["Alive"]}
        return [("node" if holder.get("node_id") in dead_nodes
                 else "worker" if self._worker_gone(holder.get("worker_id")) else None)
                for holder in holders]

    def _worker_gone(self, worker_id: str | None) -> bool:
        """Whether the GCS's worker table marks ``worker_id`` (hex) not alive."""
        if self._workers is None or not worker_id:
            return False
        record = self._workers(self._worker_id(worker_id))
        return record is not None and not self._parse(record).is_alive
