"""``run --executor ray``: episodes as Ray tasks on a real two-node cluster (tests/conftest.py),
the run directory written by the driver alone, with the run's guarantees held cluster-wide."""

from __future__ import annotations

import csv
import dataclasses
import json

import pytest

from llm_aai.execution import LOCAL_NODE
from llm_aai.llm.fake_server import FakeChatServer
from llm_aai.logs import RunStore
from llm_aai.protocol import PAPER_PROTOCOL
from llm_aai.runner import ModelOptions, RunConfig, start_run

TASKS = "01-04-03,01-06-02,02-02-01"
TIMING = {"duration_s", "node_id", "host"}  # and each call's latency in the turn logs


def _config(testbed_dir, **changes) -> RunConfig:
    settings = {"model": "heuristic", "tasks": TASKS, "trials": 1, "seed": 7,
                "arenas_dir": testbed_dir, "resolution": 64, "concurrency": 2,
                "protocol": dataclasses.replace(PAPER_PROTOCOL, max_scripts=4)}
    return RunConfig(**{**settings, **changes})


def _on_ray(config: RunConfig, cluster) -> RunConfig:
    return dataclasses.replace(config, executor="ray", ray_address=cluster.address)


def _summary(run_dir):
    with (run_dir / "summary.csv").open(newline="") as handle:
        return list(csv.DictReader(handle))


def _without_timing(rows):
    return [{k: v for k, v in row.items() if k not in TIMING} for row in rows]


def _episode_logs(run_dir) -> dict[str, object]:
    """Every episode's turns (each call's latency left out) and frames, by episode."""
    logs = {}
    for episode in sorted((run_dir / "episodes").iterdir()):
        turns = [json.loads(line) for line in (episode / "turns.jsonl").read_text().splitlines()]
        for turn in turns:
            if turn.get("usage"):
                turn["usage"].pop("latency_s")
        frames = {path.name: path.read_bytes() for path in sorted(episode.glob("frames/*"))}
        logs[episode.name] = (turns, frames)
    return logs


def _tasks_of(run_dir):
    return json.loads((run_dir / "manifest.json").read_text())["run"]["tasks"]


def _cluster_nodes():
    import ray

    return {node["NodeID"] for node in ray.nodes() if node["Alive"]}


def _same_run(local_dir, ray_dir):
    local_rows, ray_rows = _summary(local_dir), _summary(ray_dir)
    assert len(local_rows) == len(_tasks_of(local_dir))
    assert _without_timing(local_rows) == _without_timing(ray_rows)
    assert _episode_logs(local_dir) == _episode_logs(ray_dir)
    assert {row["node_id"] for row in local_rows} == {LOCAL_NODE}
    assert all(row["host"] for row in local_rows + ray_rows)
    placed = {row["node_id"] for row in ray_rows}
    assert placed <= _cluster_nodes() and len(placed) == 2  # both nodes played
    for row in ray_rows:  # each episode's result says where it ran, as its row does
        result = RunStore(ray_dir).finished_results()[row["episode_id"]]
        assert (result.node_id, result.host) == (row["node_id"], row["host"])


@pytest.mark.slow
def test_the_heuristic_plays_the_same_episodes_on_the_cluster_as_locally(ray_cluster,
                                                                          testbed_dir, tmp_path):
    config = _config(testbed_dir)
    local = start_run(config, out=tmp_path, run_id="local", show_progress=False)
    on_ray = start_run(_on_ray(config, ray_cluster), out=tmp_path, run_id="ray",
                       show_progress=False)
    _same_run(local.run_dir, on_ray.run_dir)
    assert json.loads((on_ray.run_dir / "manifest.json").read_text())["run"]["config"][
        "executor"] == "ray"


@pytest.mark.slow
def test_a_model_over_real_http_plays_the_same_on_the_cluster(ray_cluster, testbed_dir,
                                                              tmp_path):
    with FakeChatServer(default="Turn(30);\nGo(20);") as server:
        config = _config(testbed_dir, model="openai/fake", tasks="01-04-03,02-02-01",
                         model_options=ModelOptions(api_base=server.url, max_tokens=64))
        local = start_run(config, out=tmp_path, run_id="local", show_progress=False)
        on_ray = start_run(_on_ray(config, ray_cluster), out=tmp_path, run_id="ray",
                           show_progress=False)
    _same_run(local.run_dir, on_ray.run_dir)


PRICES = (100.0, 100.0)  # $ per million tokens: a call costs about 20 cents


def _call_costs(run_dir):
    costs = []
    for turns in sorted(run_dir.glob("episodes/*/turns.jsonl")):
        for line in turns.read_text().splitlines():
            usage = json.loads(line).get("usage") or {}
            if usage.get("cost_usd"):
                costs.append(usage["cost_usd"])
    return costs


@pytest.mark.slow
def test_the_hard_budget_holds_across_the_cluster(ray_cluster, testbed_dir, tmp_path, capsys):
    budget = 1.0
    with FakeChatServer(default="Turn(6);", latency_s=0.05) as server:
        config = _config(testbed_dir, model="openai/fake", tasks="01-04-03,01-06-02", trials=2,
                         budget_usd=budget, protocol=dataclasses.replace(PAPER_PROTOCOL,
                                                                         max_scripts=3),
                         model_options=ModelOptions(api_base=server.url, max_tokens=64,
                                                    price_per_mtok=PRICES))
        outcome = start_run(_on_ray(config, ray_cluster), out=tmp_path, run_id="r",
                            show_progress=False)
        calls = len(server.requests)
    store = RunStore(outcome.run_dir)
    costs = _call_costs(outcome.run_dir)
    assert len(costs) == calls > 2  # every call paid for is in a log the driver wrote
    assert store.spent()[1] <= budget  # never over, with episodes on two nodes at once
    results = store.finished_results().values()
    assert any(r.end_reason == "budget" for r in results)
    assert "budget reached" in capsys.readouterr().err


@pytest.mark.slow
def test_the_provider_limit_holds_across_the_cluster(ray_cluster, testbed_dir, tmp_path):
    with FakeChatServer(default="Turn(6);", latency_s=0.3) as server:
        config = _config(testbed_dir, model="openai/fake", tasks="01-04-03,02-02-01",
                         protocol=dataclasses.replace(PAPER_PROTOCOL, max_scripts=3),
                         model_options=ModelOptions(api_base=server.url, max_tokens=64,
                                                    provider_concurrency=1))
        outcome = start_run(_on_ray(config, ray_cluster), out=tmp_path, run_id="r",
                            show_progress=False)
        peak = server.max_in_flight
    rows = _summary(outcome.run_dir)
    assert len({row["node_id"] for row in rows}) == 2  # one process on each node
    assert peak == 1  # yet one call at a time, as --provider-concurrency 1 asks


@pytest.mark.slow
def test_the_response_cache_is_the_drivers(ray_cluster, testbed_dir, tmp_path):
    cache = tmp_path / "cache"
    with FakeChatServer(default="Turn(6);") as server:
        config = _config(testbed_dir, model="openai/fake", tasks="01-04-03,02-02-01",
                         cache_dir=cache,
                         protocol=dataclasses.replace(PAPER_PROTOCOL, max_scripts=3),
                         model_options=ModelOptions(api_base=server.url, max_tokens=64))
        first = start_run(_on_ray(config, ray_cluster), out=tmp_path, run_id="first",
                          show_progress=False)
        asked = len(server.requests)
        again = start_run(_on_ray(config, ray_cluster), out=tmp_path, run_id="again",
                          show_progress=False)
        assert len(server.requests) == asked  # every reply came from the cache
    assert len(list(cache.glob("*/*.json"))) == asked  # stored in the driver's folder
    records = [json.loads((run.run_dir / "manifest.json").read_text())["cache"]
               for run in (first, again)]
    assert [(r["hits"], r["misses"]) for r in records] == [(0, asked), (asked, 0)]


@pytest.mark.slow
def test_the_driver_stops_after_failures_in_a_row(ray_cluster, testbed_dir, tmp_path, capsys):
    from llm_aai.llm.fake_server import ServerError

    with FakeChatServer(responder=lambda body: ServerError(503)) as server:
        config = _config(testbed_dir, model="openai/fake", trials=3, concurrency=2,
                         stop_after_failed_episodes=2, max_relaunches=0,
                         model_options=ModelOptions(api_base=server.url, max_tokens=64,
                                                    max_retries=0))
        outcome = start_run(_on_ray(config, ray_cluster), out=tmp_path, run_id="r",
                            show_progress=False)
    sealed = RunStore(outcome.run_dir).finished_results().values()
    assert sealed and all(r.end_reason == "infrastructure" for r in sealed)
    assert len(sealed) < 9  # 3 tasks x 3 trials: the rest were not started
    assert "stopped: the last" in capsys.readouterr().err
