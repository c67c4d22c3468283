"""A Ray task for the cluster budget test (module level: Ray workers import it by name)."""

from __future__ import annotations

import threading

from llm_aai.llm.client import LiteLLMClient
from llm_aai.llm.pricing import Prices
from llm_aai.llm.types import user_message
from llm_aai.runner.budget import BudgetedClient, BudgetReached

PRICES = (100.0, 100.0)  # $ per million tokens


def spend_until_refused(url: str, gate, threads: int) -> tuple[list[float], str]:
    """Call the model from ``threads`` threads until the ledger refuses; the calls' costs and
    the node this ran on."""
    import ray

    client = BudgetedClient(LiteLLMClient("openai/fake", api_base=url, api_key="x",
                                          max_tokens=64, max_retries=0,
                                          price_per_mtok=PRICES),
                            gate, Prices(*PRICES), image_tokens=0)
    costs: list[float] = []
    lock = threading.Lock()

    def call() -> None:
        while True:
            try:
                response = client.complete([user_message("go on")])
            except BudgetReached:
                return
            with lock:
                costs.append(response.cost_usd)

    workers = [threading.Thread(target=call) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return costs, ray.get_runtime_context().get_node_id()
