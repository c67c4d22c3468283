"""The run's budget as one Ray actor: every call on every node reserves with the same ledger.

``BudgetGate`` holds a run's spending under a lock, which binds the threads of one process.
Episodes played as Ray tasks on several machines need one holder for the whole cluster: a
named actor (``BudgetLedger``) wrapping a ``BudgetGate``. An actor runs its method calls one
at a time, so a reservation checks and holds the money in one step, as the lock does locally;
``RayBudgetGate`` has the gate's interface (``reserve``, ``settle``, ``refused``), so
``BudgetedClient`` uses it unchanged, and it is picklable (it carries the actor's name, not a
connection), so it travels to the workers with the episode.

The ledger is pinned to the driver's node: a worker node lost takes none of the accounts with
it, and a run never goes over its budget, whatever the concurrency and the number of nodes.
"""

from __future__ import annotations

from typing import Any

from llm_aai.execution.ray_executor import import_ray
from llm_aai.runner.budget import BudgetGate, BudgetReached

__all__ = ["BudgetLedger", "RayBudgetGate"]


class BudgetLedger:
    """The actor's body: a ``BudgetGate`` whose refusal travels back as a message."""

    def __init__(self, limit_usd: float, spent_usd: float) -> None:
        self.gate = BudgetGate(limit_usd, spent_usd)

    def reserve(self, estimate_usd: float) -> str | None:
        """Hold the estimate; None if held, else why not (the gate's message)."""
        try:
            self.gate.reserve(estimate_usd)
        except BudgetReached as refusal:
            return str(refusal)
        return None

    def settle(self, estimate_usd: float, cost_usd: float) -> None:
        """Replace a reservation by what the call cost."""
        self.gate.settle(estimate_usd, cost_usd)

    def accounts(self) -> tuple[float, float, bool]:
        """(spent, reserved, refused)."""
        return self.gate.spent_usd, self.gate.reserved_usd, self.gate.refused


class RayBudgetGate:
    """A ``BudgetGate`` for the whole cluster, backed by the named ``BudgetLedger`` actor.

    Made on the driver with ``RayBudgetGate.start``, which creates the actor and keeps its
    handle (the actor lives as long as the driver holds it); copies sent to workers find the
    actor by name.

    Args:
        name: the actor's name (unique per run, e.g. from the run id).
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self._handle: Any = None

    @classmethod
    def start(cls, name: str, limit_usd: float, spent_usd: float = 0.0) -> RayBudgetGate:
        """Create the ledger on this (the driver's) node and a gate that reserves with it."""
        ray = import_ray()
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(),
                                              soft=False)
        gate = cls(name)
        gate._handle = ray.remote(BudgetLedger).options(
            name=name, num_cpus=0, max_restarts=0, scheduling_strategy=here,
        ).remote(limit_usd, spent_usd)
        return gate

    def _ledger(self) -> Any:
        if self._handle is None:
            self._handle = import_ray().get_actor(self.name)
        return self._handle

    def __getstate__(self) -> dict:
        return {"name": self.name}  # a handle is found again by name where it lands

    def __setstate__(self, state: dict) -> None:
        self.name = state["name"]
        self._handle = None

    def reserve(self, estimate_usd: float) -> None:
        """Hold ``estimate_usd`` with the ledger (waits for its answer).

        Raises:
            BudgetReached: the call could take the run past its budget.
        """
        refusal = import_ray().get(self._ledger().reserve.remote(estimate_usd))
        if refusal is not None:
            raise BudgetReached(refusal)

    def settle(self, estimate_usd: float, cost_usd: float) -> None:
        """Replace a reservation by what the call cost (waits, so the next reserve sees it)."""
        import_ray().get(self._ledger().settle.remote(estimate_usd, cost_usd))

    def _accounts(self) -> tuple[float, float, bool]:
        return import_ray().get(self._ledger().accounts.remote())

    @property
    def spent_usd(self) -> float:
        """What the run has spent (all nodes)."""
        return self._accounts()[0]

    @property
    def reserved_usd(self) -> float:
        """What calls in flight hold (all nodes)."""
        return self._accounts()[1]

    @property
    def refused(self) -> bool:
        """True once a call was refused anywhere: the run starts no more episodes."""
        return self._accounts()[2]
