"""The hard budget across a real two-node Ray cluster: one ledger actor, real HTTP calls."""

from __future__ import annotations

import pytest

from llm_aai.llm.fake_server import FakeChatServer
from tests.runner import budget_jobs


@pytest.mark.slow
def test_no_call_on_any_node_starts_that_could_pass_the_budget(ray_cluster):
    import ray

    from llm_aai.runner.ray_budget import RayBudgetGate

    budget = 0.1
    gate = RayBudgetGate.start("test-budget-ledger", budget)
    spend = ray.remote(num_cpus=1)(budget_jobs.spend_until_refused)
    with FakeChatServer(default="Turn(6);", latency_s=0.02) as server:
        # one task per node's CPU, eight threads each: sixteen calls compete at once
        results = ray.get([spend.remote(server.url, gate, 8) for _ in range(2)])
        calls = len(server.requests)
    costs = [cost for task_costs, _ in results for cost in task_costs]
    assert len(costs) == calls > 10  # every call was paid for and recorded
    assert len({node for _, node in results}) == 2  # both nodes spent
    assert sum(costs) <= budget  # never over, at sixteen calls in flight on two nodes
    assert gate.spent_usd == pytest.approx(sum(costs))
    assert gate.refused and gate.reserved_usd == pytest.approx(0.0, abs=1e-12)
    assert budget - sum(costs) < 2 * max(costs) * 16  # it stopped near the budget, not early
