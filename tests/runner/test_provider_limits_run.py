"""A provider's limits held by a whole run, locally and on a real two-node Ray cluster
(tests/conftest.py): ``--provider-rpm``, a 429's Retry-After pausing every node's calls, and a
slot taken back as soon as Ray knows the worker holding it dead."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import signal
import threading
import time

import pytest

from llm_aai.llm import provider_limits
from llm_aai.llm.fake_server import Delay, FakeChatServer, RateLimit
from llm_aai.logs import RunStore
from llm_aai.protocol import PAPER_PROTOCOL
from llm_aai.runner import ModelOptions, RunConfig, run_config_of, start_run
from tests.helpers.runs import make_run
from tests.llm.test_provider_limits import most_in_any_window

WINDOW_S = 2.0  # the tests' "minute"
RPM = 2


def _config(testbed_dir, server, executor, ray_address, *, max_scripts=3, **options):
    """Two episodes; on Ray one whole CPU each, so the two one-CPU nodes play one each (a
    model's default quarter would let one node take both)."""
    return RunConfig(model="openai/fake", tasks="01-04-03,02-02-01", trials=1, seed=7,
                     arenas_dir=testbed_dir, resolution=64, concurrency=2,
                     protocol=dataclasses.replace(PAPER_PROTOCOL, max_scripts=max_scripts),
                     executor=executor, ray_address=ray_address,
                     ray_episode_cpus=1.0 if executor == "ray" else None,
                     model_options=ModelOptions(api_base=server.url, max_tokens=64, **options))


def _arrivals(requests) -> list[float]:
    return [request.received_at for request in requests]


def _nodes(run_dir) -> set[str]:
    return {r.node_id for r in RunStore(run_dir).finished_results().values()}


@pytest.mark.slow
def test_provider_rpm_holds_for_a_local_run_and_is_kept_for_resume(testbed_dir, tmp_path,
                                                                     monkeypatch):
    monkeypatch.setattr(provider_limits, "WINDOW_S", WINDOW_S)
    with FakeChatServer(default="Turn(30);\nGo(20);") as server:
        run_dir = make_run(testbed_dir, tmp_path, "local", "--model", "openai/fake",
                           "--api-base", server.url, "--tasks", "01-04-03,02-02-01",
                           "--max-scripts", "3", "--concurrency", "2",
                           "--provider-rpm", str(RPM))
        arrived = _arrivals(server.requests)
    assert len(arrived) >= 4 and len(RunStore(run_dir).finished_results()) == 2
    assert most_in_any_window(arrived, WINDOW_S) <= RPM  # two episodes in threads, one limit
    assert run_config_of(run_dir).model_options.provider_rpm == RPM  # what --resume plays with
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["agent"]["options"]["requests_per_minute"] == RPM


@pytest.mark.slow
def test_provider_rpm_holds_across_the_cluster(ray_cluster, testbed_dir, tmp_path,
                                               monkeypatch):
    monkeypatch.setattr(provider_limits, "WINDOW_S", WINDOW_S)  # read by the driver
    with FakeChatServer(default="Turn(30);\nGo(20);") as server:
        config = _config(testbed_dir, server, "ray", ray_cluster.address, provider_rpm=RPM)
        outcome = start_run(config, out=tmp_path, run_id="ray", show_progress=False)
        arrived = _arrivals(server.requests)
    assert len(arrived) >= 4 and len(_nodes(outcome.run_dir)) == 2  # both nodes called
    assert most_in_any_window(arrived, WINDOW_S) <= RPM


def _episode_of(body) -> str:
    """Which episode a request belongs to: its conversation's first image is its arena's."""
    return hashlib.sha256(json.dumps(body["messages"][:2]).encode()).hexdigest()


@pytest.mark.slow
def test_a_429_seen_on_one_node_pauses_the_providers_calls_on_every_node(ray_cluster,
                                                                         testbed_dir, tmp_path):
    pause_s, latency_s = 3.0, 0.3
    seen: set[str] = set()
    limited: list[str] = []
    lock = threading.Lock()

    def answer(body):  # a 429 once both episodes are calling
        with lock:
            seen.add(_episode_of(body))
            if len(seen) == 2 and not limited:
                limited.append(_episode_of(body))
                return RateLimit(retry_after=pause_s)
        return "Turn(30);"

    with FakeChatServer(responder=answer, latency_s=latency_s) as server:
        config = _config(testbed_dir, server, "ray", ray_cluster.address, max_scripts=10)
        outcome = start_run(config, out=tmp_path, run_id="ray", show_progress=False)
        requests = list(server.requests)
    assert len(_nodes(outcome.run_dir)) == 2
    told = next(r.received_at for r in requests if r.action == RateLimit(retry_after=pause_s))
    others = [r.received_at for r in requests if _episode_of(r.body) != limited[0]]
    # a call already on its way when the 429 was answered may still arrive (the server's
    # latency, the answer's way back to the worker and the worker's word to the actor: 1 s)
    assert not [t for t in others if told + latency_s + 1.0 < t < told + pause_s]
    assert any(t >= told + pause_s for t in others)  # the other node went on after the pause


@pytest.mark.slow
def test_a_slot_held_by_a_killed_worker_comes_back_once_ray_knows_the_worker_gone(
        ray_cluster, testbed_dir, tmp_path):
    import ray

    timeout_s = 60.0  # a lease of 65 s, so its running out is unmistakable
    killed: list[float] = []
    reclaims: list[dict] = []

    def kill_the_slot_holder():
        deadline = time.monotonic() + 120
        while not server.requests and time.monotonic() < deadline:
            time.sleep(0.05)
        name = next(actor["name"] for actor in ray.util.list_named_actors(all_namespaces=True)
                    if actor["name"].startswith("llm-aai-slots-"))
        slots = ray.get_actor(name)
        (holder,) = [h for held in ray.get(slots.holders.remote()).values() for h in held]
        os.kill(holder["pid"], signal.SIGKILL)  # mid-call: the server holds its reply
        killed.append(time.monotonic())
        deadline = killed[0] + 40  # well within the lease
        while len(server.requests) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        if len(server.requests) < 2:  # the slot did not come back: stop the run, fail
            os.kill(os.getpid(), signal.SIGINT)
            return
        reclaims.append(ray.get(slots.reclaims.remote()))

    with FakeChatServer([Delay(90)], default="Turn(30);") as server:
        config = _config(testbed_dir, server, "ray", ray_cluster.address, max_scripts=2,
                         provider_concurrency=1, timeout_s=timeout_s)
        watcher = threading.Thread(target=kill_the_slot_holder, daemon=True)
        watcher.start()
        outcome = start_run(config, out=tmp_path, run_id="ray", show_progress=False)
        watcher.join(timeout=10)
        requests = list(server.requests)
    assert killed and len(requests) >= 2
    # the GCS marks the worker dead within a second, the waiting call's next look at the
    # holders sees it: the next call had the slot seconds after the kill, not at the lease
    assert requests[1].received_at - killed[0] < 20, requests[1].received_at - killed[0]
    assert reclaims and reclaims[0]["worker lost"] == 1 and reclaims[0]["expired"] == 0
    results = RunStore(outcome.run_dir).finished_results().values()
    assert len(results) == 2 and all(r.end_reason != "infrastructure" for r in results)
