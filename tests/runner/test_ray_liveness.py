"""The cluster's provider slots come back as soon as Ray knows their holder gone, and by their
lease otherwise: the ``ProviderSlots`` actor on the real two-node cluster (tests/conftest.py),
with real model calls over HTTP to the fake server."""

from __future__ import annotations

import threading
import time

import pytest

from llm_aai.llm.client import DEFAULT_TIMEOUT_S
from llm_aai.llm.fake_server import Delay, FakeChatServer
from llm_aai.llm.provider_limits import LEASE_MARGIN_S
from llm_aai.llm.types import user_message
from llm_aai.runner.ray_services import ProviderSlots, actor_name, endpoint_key, start_on_driver
from tests.runner.ray_jobs import call_through_slots, slot_client

NODE = {"num_cpus": 1, "object_store_memory": 100 * 1024 * 1024}


def _wait_for(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)
    return condition()


@pytest.mark.slow
def test_a_slot_held_on_a_lost_node_comes_back_once_ray_knows_the_node_gone(ray_cluster):
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    lease_s = DEFAULT_TIMEOUT_S + LEASE_MARGIN_S  # what a call at the default --timeout holds
    doomed = ray_cluster.add_node(**NODE)
    ray_cluster.wait_for_nodes()
    slots = actor_name("slots")
    actor = start_on_driver(ProviderSlots, slots)
    try:
        with FakeChatServer([Delay(90)], default="Go(1);") as server:
            on_doomed = NodeAffinitySchedulingStrategy(doomed.node_id, soft=False)
            held = ray.remote(call_through_slots).options(scheduling_strategy=on_doomed,
                                                          max_retries=0).remote(server.url, slots)
            assert _wait_for(lambda: server.requests or ray.wait([held], timeout=0)[0], 90)
            assert server.requests, ray.get(held)  # its call under way (the slot held)
            (holder,) = [h for held in ray.get(actor.holders.remote()).values() for h in held]
            assert holder["node_id"] == doomed.node_id
            removed_at = time.monotonic()
            ray_cluster.remove_node(doomed, allow_graceful=False)
            here = slot_client(server.url, slots)  # the next call, on the driver's node
            caller = threading.Thread(target=here.complete, args=([user_message("go")],),
                                      daemon=True)
            caller.start()
            caller.join(timeout=60)
            requests = list(server.requests)
        assert len(requests) == 2, "the next call never had the slot (it waits for the lease)"
        waited = requests[1].received_at - removed_at
        # Ray marks the node dead once its health checks missed it (about 13 s measured),
        # the actor asks every second: far sooner than the 125 s lease
        assert waited < lease_s / 3, waited
        reclaims = ray.get(actor.reclaims.remote())
        assert reclaims["node lost"] == 1 and reclaims["expired"] == 0
        assert ray.get(actor.holders.remote())[endpoint_key(here)] == []  # given back after
    finally:
        ray.kill(actor)


@pytest.mark.slow
def test_a_slot_a_live_holder_keeps_comes_back_only_when_its_lease_runs_out(ray_cluster):
    import ray

    lease_s = 2.5
    context = ray.get_runtime_context()
    alive = {"node_id": context.get_node_id(), "worker_id": context.get_worker_id(), "pid": 0}
    actor = start_on_driver(ProviderSlots, actor_name("slots"))
    try:
        ray.get(actor.acquire.remote("k", 1, None, lease_s, alive))  # never given back
        asked_at = time.monotonic()
        ray.get(actor.acquire.remote("k", 1, None, lease_s, alive), timeout=30)
        waited = time.monotonic() - asked_at
        assert lease_s - 0.3 <= waited <= lease_s + 3.0, waited  # checked twice, kept
        reclaims = ray.get(actor.reclaims.remote())
        assert reclaims == {"expired": 1, "node lost": 0, "worker lost": 0, "worker check": "on"}
    finally:
        ray.kill(actor)


@pytest.mark.slow
def test_a_stopping_run_lends_no_more_slots_yet_takes_slots_back(ray_cluster):
    """After ``stop_lending`` no call gets a slot, neither one already waiting for a slot nor
    a new one (their workers are being ended), while a call under way still gives its back."""
    import ray

    context = ray.get_runtime_context()
    me = {"node_id": context.get_node_id(), "worker_id": context.get_worker_id(), "pid": 0}
    actor = start_on_driver(ProviderSlots, actor_name("slots"))
    try:
        under_way = ray.get(actor.acquire.remote("k", 1, None, 60.0, me), timeout=30)
        waiting = actor.acquire.remote("k", 1, None, 60.0, me)  # every slot taken
        assert not ray.wait([waiting], timeout=0.5)[0]
        ray.get(actor.stop_lending.remote(), timeout=30)
        ray.get(actor.release.remote("k", under_way), timeout=30)  # the slot comes back...
        assert ray.get(actor.holders.remote()) == {"k": []}
        new = actor.acquire.remote("k", 1, None, 60.0, me)
        other = actor.acquire.remote("another endpoint", 4, None, 60.0, me)
        ready, _ = ray.wait([waiting, new, other], num_returns=3, timeout=2.0)
        assert ready == []  # ...but nobody is lent one
        assert ray.get(actor.holders.remote()) == {"k": [], "another endpoint": []}
    finally:
        ray.kill(actor)
