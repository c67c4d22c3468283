"""``run --executor ray``: episodes as Ray tasks on a real two-node cluster (tests/conftest.py),
the run directory written by the driver alone, with the run's guarantees held cluster-wide."""

from __future__ import annotations

import dataclasses
import json
import sys
import threading
import time

import pytest

from llm_aai.execution import LOCAL_NODE
from llm_aai.llm.fake_server import FakeChatServer
from llm_aai.logs import RunStore
from llm_aai.protocol import PAPER_PROTOCOL
from llm_aai.runner import ModelOptions, RunConfig, start_run
from tests.helpers.ray_runs import episode_logs as _episode_logs
from tests.helpers.ray_runs import summary_rows as _summary
from tests.helpers.ray_runs import without_timing as _without_timing
from tests.helpers.runs import call_costs

TASKS = "01-04-03,01-06-02,02-02-01"


def test_without_ray_the_run_command_says_how_to_install(monkeypatch, tmp_path, capsys,
                                                         testbed_dir):
    from llm_aai.cli import run as run_cli

    monkeypatch.setitem(sys.modules, "ray", None)  # an import of ray now fails
    code = run_cli.main(["--model", "heuristic", "--tasks", "01-04-03", "--arenas-dir",
                         str(testbed_dir), "--out", str(tmp_path / "runs"), "--executor", "ray",
                         "--no-progress"])
    assert code == 2
    assert "pip install 'llm-aai[ray]'" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()  # refused before anything was written


def test_a_cluster_address_needs_the_ray_executor(tmp_path, capsys, testbed_dir):
    from llm_aai.cli import run as run_cli

    code = run_cli.main(["--model", "heuristic", "--tasks", "01-04-03", "--arenas-dir",
                         str(testbed_dir), "--out", str(tmp_path), "--ray-address", "auto"])
    assert code == 2
    assert "--ray-address names a Ray cluster: it needs --executor ray" in \
        capsys.readouterr().err


def test_a_ray_started_here_on_a_reachable_address_stops_the_run_in_one_line(
        monkeypatch, tmp_path, capsys, testbed_dir):
    """A Ray that would not start on loopback is shut down by ``start_local``; the run says
    why in one line, exit 2, as for any Ray it cannot use (not a traceback)."""
    from llm_aai.cli import run as run_cli
    from llm_aai.execution.ray_local import NotLoopback
    from llm_aai.runner import ray_suite

    pytest.importorskip("ray")

    def exposed(address, cpus):
        raise NotLoopback("--executor ray: the Ray started here took the node address "
                          "192.0.2.2")

    monkeypatch.setattr(ray_suite, "connect", exposed)
    code = run_cli.main(["--model", "heuristic", "--tasks", "01-04-03", "--arenas-dir",
                         str(testbed_dir), "--out", str(tmp_path / "runs"), "--executor", "ray",
                         "--no-progress"])
    assert code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "error: --executor ray: the Ray started here took the node address 192.0.2.2")


def _config(testbed_dir, **changes) -> RunConfig:
    settings = {"model": "heuristic", "tasks": TASKS, "trials": 1, "seed": 7,
                "arenas_dir": testbed_dir, "resolution": 64, "concurrency": 2,
                "protocol": dataclasses.replace(PAPER_PROTOCOL, max_scripts=4)}
    return RunConfig(**{**settings, **changes})


def _on_ray(config: RunConfig, cluster) -> RunConfig:
    return dataclasses.replace(config, executor="ray", ray_address=cluster.address)


def _tasks_of(run_dir):
    return json.loads((run_dir / "manifest.json").read_text())["run"]["tasks"]


def _cluster_nodes():
    import ray

    return {node["NodeID"] for node in ray.nodes() if node["Alive"]}


def _same_run(local_dir, ray_dir, *, nodes=2):
    local_rows, ray_rows = _summary(local_dir), _summary(ray_dir)
    trials = json.loads((local_dir / "manifest.json").read_text())["run"]["config"]["trials"]
    assert len(local_rows) == len(_tasks_of(local_dir)) * trials
    assert _without_timing(local_rows) == _without_timing(ray_rows)
    assert _episode_logs(local_dir) == _episode_logs(ray_dir)
    assert {row["node_id"] for row in local_rows} == {LOCAL_NODE}
    assert all(row["host"] for row in local_rows + ray_rows)
    placed = {row["node_id"] for row in ray_rows}
    assert placed <= _cluster_nodes() and len(placed) >= nodes  # both nodes played
    for row in ray_rows:  # each episode's result says where it ran, as its row does
        result = RunStore(ray_dir).finished_results()[row["episode_id"]]
        assert (result.node_id, result.host) == (row["node_id"], row["host"])


def _services_seen(monkeypatch) -> list[set[str]]:
    """Each Ray run's named service actors alive as it ends (``slots``, ``cache``, ``budget``)."""
    import ray

    from llm_aai.runner.ray_suite import RaySuite

    seen: list[set[str]] = []
    stop = RaySuite._stop_services

    def recording_stop(suite):
        seen.append({name.split("-")[2] for name in ray.util.list_named_actors()
                     if name.startswith("llm-aai-")})
        stop(suite)

    monkeypatch.setattr(RaySuite, "_stop_services", recording_stop)
    return seen


@pytest.mark.slow
def test_the_heuristic_plays_the_same_episodes_on_the_cluster_as_locally(ray_cluster,
                                                                          testbed_dir, tmp_path,
                                                                          monkeypatch):
    services = _services_seen(monkeypatch)
    config = _config(testbed_dir)
    local = start_run(config, out=tmp_path, run_id="local", show_progress=False)
    on_ray = start_run(_on_ray(config, ray_cluster), out=tmp_path, run_id="ray",
                       show_progress=False)
    _same_run(local.run_dir, on_ray.run_dir)
    recorded = json.loads((on_ray.run_dir / "manifest.json").read_text())["run"]["config"]
    assert recorded["executor"] == "ray"
    assert recorded["ray_episode_cpus"] == 1.0  # a built-in agent simulates flat out
    # no model client, no budget, no cache: no service actor (each is a process to start)
    assert services == [set()]


@pytest.mark.slow
def test_a_model_over_real_http_plays_the_same_on_the_cluster_within_its_provider_limit(
        ray_cluster, testbed_dir, tmp_path):
    with FakeChatServer(default="Turn(30);\nGo(20);", latency_s=0.2) as server:
        config = _config(testbed_dir, model="openai/fake", tasks="01-04-03,02-02-01",
                         protocol=dataclasses.replace(PAPER_PROTOCOL, max_scripts=3),
                         model_options=ModelOptions(api_base=server.url, max_tokens=64,
                                                    provider_concurrency=1))
        local = start_run(config, out=tmp_path, run_id="local", show_progress=False)
        server.max_in_flight = 0
        whole_cpus = dataclasses.replace(_on_ray(config, ray_cluster), ray_episode_cpus=1.0)
        on_ray = start_run(whole_cpus, out=tmp_path, run_id="ray",  # one episode per node
                           show_progress=False)
        peak = server.max_in_flight
    _same_run(local.run_dir, on_ray.run_dir)  # played on both nodes at once...
    assert peak == 1  # ...yet one call at a time, as --provider-concurrency 1 asks


def _cluster_cpus() -> float:
    import ray

    return sum(node["Resources"].get("CPU", 0.0) for node in ray.nodes() if node["Alive"])


@pytest.mark.slow
def test_model_episodes_reserve_a_quarter_of_a_cpu_by_default(
        ray_cluster, testbed_dir, tmp_path):
    """A model's episode mostly waits on its model: a quarter of a CPU each by default, with
    the same results as locally. (That a quarter lets the two one-CPU nodes hold four waiting
    episodes at once is the next test's, which waits for them; counting the calls in flight
    here depended on how fast the workers booted on a loaded machine.)"""
    with FakeChatServer(default="Turn(30);\nGo(20);") as server:
        config = _config(testbed_dir, model="openai/fake", tasks="01-04-03,02-02-01",
                         trials=2, concurrency=4,
                         protocol=dataclasses.replace(PAPER_PROTOCOL, max_scripts=2),
                         model_options=ModelOptions(api_base=server.url, max_tokens=64))
        local = start_run(config, out=tmp_path, run_id="local", show_progress=False)
        on_ray = start_run(_on_ray(config, ray_cluster), out=tmp_path, run_id="ray",
                           show_progress=False)
    _same_run(local.run_dir, on_ray.run_dir, nodes=1)  # Ray may pack them on one node
    recorded = json.loads((on_ray.run_dir / "manifest.json").read_text())["run"]["config"]
    assert recorded["ray_episode_cpus"] == 0.25  # the model's default, as played


@pytest.mark.slow
def test_episodes_hold_their_fraction_of_a_cpu_while_they_wait(ray_cluster, testbed_dir,
                                                               tmp_path, monkeypatch):
    """Each episode's task reserves --ray-episode-cpus: at 0.25 the two one-CPU nodes hold
    all four waiting episodes at once (at 1, two at most: the test then waits 90 s and fails)."""
    import functools

    from tests.runner.ray_jobs import WaitingHeuristic

    marks = tmp_path / "marks"
    marks.mkdir()
    _with_agent(monkeypatch, functools.partial(WaitingHeuristic, str(marks), 4, 90.0))
    config = _config(testbed_dir, tasks="01-04-03,02-02-01", trials=2, concurrency=4,
                     protocol=dataclasses.replace(PAPER_PROTOCOL, max_scripts=1))
    outcome = start_run(dataclasses.replace(_on_ray(config, ray_cluster), ray_episode_cpus=0.25),
                        out=tmp_path, run_id="r", show_progress=False)
    assert len(RunStore(outcome.run_dir).finished_results()) == 4
    seen = [tuple(map(float, mark.read_text().split())) for mark in marks.glob("*[0-9]")]
    assert len(seen) == 4
    assert {cpus for _, cpus in seen} == {0.25}  # what Ray reserved for each
    assert max(waiting for waiting, _ in seen) == 4 > _cluster_cpus() == 2


def test_more_cpus_per_episode_than_a_node_has_are_refused_naming_the_flag(
        ray_cluster, testbed_dir, tmp_path, capsys):
    from llm_aai.cli import run as run_cli

    started = time.monotonic()
    code = run_cli.main(["--model", "heuristic", "--tasks", "01-04-03", "--arenas-dir",
                         str(testbed_dir), "--out", str(tmp_path), "--run-id", "r",
                         "--executor", "ray", "--ray-address", ray_cluster.address,
                         "--ray-episode-cpus", "1.5", "--no-progress"])
    assert code == 2 and time.monotonic() - started < 60  # not a task waiting for ever
    error = [line for line in capsys.readouterr().err.splitlines() if "error" in line]
    assert len(error) == 1 and error[0].startswith(
        "error: --ray-episode-cpus must be at most 1, the CPUs of the cluster's largest node")
    assert f"--resume {tmp_path / 'r'} and a smaller --ray-episode-cpus" in error[0]
    assert not list((tmp_path / "r" / "episodes").glob("*"))  # nothing played


@pytest.mark.parametrize(("flags", "message"), [
    (["--executor", "ray", "--ray-episode-cpus", "0"], "argument --ray-episode-cpus: 0 must"),
    (["--ray-episode-cpus", "0.5"],
     "--ray-episode-cpus reserves a Ray cluster's CPUs: it needs --executor ray"),
])
def test_a_cpu_reservation_no_run_can_use_is_refused_naming_the_flag(flags, message, tmp_path,
                                                                     capsys, testbed_dir):
    from llm_aai.cli import run as run_cli

    argv = ["--model", "heuristic", "--tasks", "01-04-03", "--arenas-dir", str(testbed_dir),
            "--out", str(tmp_path), *flags]
    try:
        code = run_cli.main(argv)
    except SystemExit as exited:  # argparse's refusal of the value itself
        code = exited.code
    assert code == 2
    assert message in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


PRICES = (100.0, 100.0)  # $ per million tokens: a call costs about 20 cents


@pytest.mark.slow
def test_the_hard_budget_holds_across_the_cluster(ray_cluster, testbed_dir, tmp_path, capsys,
                                                  monkeypatch):
    services = _services_seen(monkeypatch)
    budget = 1.2
    with FakeChatServer(default="Turn(6);", latency_s=0.05) as server:
        config = _config(testbed_dir, model="openai/fake", tasks="01-04-03,01-06-02",
                         budget_usd=budget, protocol=dataclasses.replace(PAPER_PROTOCOL,
                                                                         max_scripts=3),
                         model_options=ModelOptions(api_base=server.url, max_tokens=64,
                                                    price_per_mtok=PRICES))
        outcome = start_run(_on_ray(config, ray_cluster), out=tmp_path, run_id="r",
                            show_progress=False)
        calls = len(server.requests)
    store = RunStore(outcome.run_dir)
    costs = call_costs(outcome.run_dir)
    assert len(costs) == calls > 2  # every call paid for is in a log the driver wrote
    assert store.spent()[1] <= budget  # never over, with episodes on two nodes at once
    results = store.finished_results().values()
    assert any(r.end_reason == "budget" for r in results)
    assert "budget reached" in capsys.readouterr().err
    assert services == [{"budget", "slots"}]  # one ledger, the provider's slots, no cache


@pytest.mark.slow
def test_the_response_cache_is_the_drivers(ray_cluster, testbed_dir, tmp_path, monkeypatch):
    services = _services_seen(monkeypatch)
    cache = tmp_path / "cache"
    with FakeChatServer(default="Turn(6);") as server:
        config = _config(testbed_dir, model="openai/fake", tasks="01-04-03,02-02-01",
                         cache_dir=cache,
                         protocol=dataclasses.replace(PAPER_PROTOCOL, max_scripts=2),
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
    assert services == [{"cache", "slots"}] * 2  # a model's run: its cache and provider slots


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


def _with_agent(monkeypatch, make_agent, seal_hook=None):
    """Play the ray runs of this test with ``make_agent`` (a test agent the workers import);
    ``seal_hook(suite, result)`` is called by the driver after each episode it seals."""
    from llm_aai.runner import executors
    from llm_aai.runner.ray_suite import RaySuite

    class WithTestAgent(RaySuite):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.make_agent = make_agent

        def _seal(self, spec, attempt, played):
            result = super()._seal(spec, attempt, played)
            if seal_hook is not None:
                seal_hook(self, result)
            return result

    monkeypatch.setitem(executors.SUITES, "ray", WithTestAgent)


@pytest.mark.slow
def test_a_node_lost_mid_run_costs_no_episode_and_duplicates_none(ray_cluster, testbed_dir,
                                                                  tmp_path, monkeypatch):
    import functools
    import threading
    import time

    from tests.runner.ray_jobs import MarkingHeuristic

    doomed = ray_cluster.add_node(num_cpus=1, object_store_memory=100 * 1024 * 1024)
    ray_cluster.wait_for_nodes()
    doomed_id = doomed.node_id
    marks = tmp_path / "marks"
    marks.mkdir()
    sealed: set[int] = set()
    lock = threading.Lock()
    removed = threading.Event()

    def lose_the_node_once_it_plays(suite, result):
        with lock:
            sealed.add(result.seed)
            if removed.is_set():
                return
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:  # an episode in flight on the doomed node
                if any(int(m.name.split(".")[0]) not in sealed
                       for m in marks.glob(f"*.{doomed_id}")):
                    ray_cluster.remove_node(doomed, allow_graceful=False)
                    removed.set()
                    return
                time.sleep(0.05)

    _with_agent(monkeypatch, functools.partial(MarkingHeuristic, str(marks)),
                lose_the_node_once_it_plays)
    config = _config(testbed_dir, trials=2, concurrency=3,
                     protocol=dataclasses.replace(PAPER_PROTOCOL, max_scripts=5))
    outcome = start_run(_on_ray(config, ray_cluster), out=tmp_path, run_id="r",
                        show_progress=False)
    assert removed.is_set()
    store = RunStore(outcome.run_dir)
    results = store.finished_results()
    assert len(results) == 6 and len(_summary(outcome.run_dir)) == 6  # none lost
    assert not list(store.episodes_dir.glob("*.attempt-*"))  # none written twice
    assert all(r.end_reason != "infrastructure" and r.attempts == 1 for r in results.values())
    interrupted = {int(m.name.split(".")[0]) for m in marks.glob(f"*.{doomed_id}")} - {
        r.seed for r in results.values() if r.node_id == doomed_id}
    assert interrupted  # an episode the lost node was playing was played again elsewhere
    assert all(r.node_id != doomed_id for r in results.values() if r.seed in interrupted)


@pytest.mark.slow
def test_an_episode_that_kills_its_worker_is_recorded_not_retried_for_ever(
        ray_cluster, testbed_dir, tmp_path, monkeypatch):
    import functools

    from llm_aai.execution.ray_executor import RETRIES
    from llm_aai.settings import episode_seed
    from tests.runner.ray_jobs import CrashingHeuristic

    tally = tmp_path / "crashes"
    _with_agent(monkeypatch, functools.partial(CrashingHeuristic,
                                               episode_seed(7, "01-04-03", 1), str(tally)))
    config = _config(testbed_dir, tasks="01-04-03,02-02-01", max_relaunches=0)
    outcome = start_run(_on_ray(config, ray_cluster), out=tmp_path, run_id="r",
                        show_progress=False)
    results = RunStore(outcome.run_dir).finished_results()
    crashed, fine = results["01-04-03_t1"], results["02-02-01_t1"]
    assert crashed.end_reason == "infrastructure"
    assert crashed.infra_error.startswith("crash: the worker process died")
    assert len(tally.read_text().splitlines()) == 1 + RETRIES  # Ray's tries, then recorded
    assert fine.end_reason != "infrastructure" and fine.node_id


@pytest.mark.slow
def test_sigterm_stops_a_ray_run_cleanly_and_resume_finishes_it(ray_cluster, testbed_dir,
                                                                tmp_path):
    import signal
    import time

    from llm_aai.runner import ResumeOverrides, resume_run
    from tests.helpers.runs import keyless_env
    from tests.helpers.signals import start_module, stop, wait_until

    run_dir = tmp_path / "r"
    with FakeChatServer(default="Turn(30);", latency_s=0.3) as server:
        process = start_module(
            "llm_aai.run", "--model", "openai/fake", "--api-base", server.url, "--tasks", TASKS,
            "--arenas-dir", testbed_dir, "--out", tmp_path, "--run-id", "r", "--resolution",
            64, "--max-scripts", 5, "--concurrency", 2, "--executor", "ray", "--ray-address",
            ray_cluster.address, "--no-progress", env=keyless_env())
        wait_until(lambda: len(server.requests) >= 2, process, timeout=120)
        _, stderr = stop(process, signal.SIGTERM)
        assert process.returncode == 143, stderr  # as a local run's SIGTERM
        assert "terminated (SIGTERM)" in stderr and "Traceback" not in stderr
        assert f"continue with --resume {run_dir}" in stderr
        asked = len(server.requests)
        time.sleep(1.5)
        assert len(server.requests) == asked  # the episodes in flight were ended with it
        store = RunStore(run_dir)
        sealed = set(store.finished_results())
        assert len(sealed) < 3
        # the driver writes an episode only once it is whole: no folder without its result
        assert {p.name for p in store.episodes_dir.glob("*")} == sealed
        assert len(_summary(run_dir)) == len(sealed)
        resume_run(run_dir, ResumeOverrides(api_base=server.url), show_progress=False)
    results = store.finished_results()
    assert set(results) == {"01-04-03_t1", "01-06-02_t1", "02-02-01_t1"}
    assert {r.node_id for r in results.values()} <= _cluster_nodes()  # resumed on the cluster


def _users(request: dict) -> int:
    return sum(message["role"] == "user" for message in request["messages"])


@pytest.mark.slow
def test_conversations_across_tasks_play_the_same_on_the_cluster_as_locally(
        ray_cluster, testbed_dir, tmp_path):
    """Two trials' conversations, one per node at once, each task's requests carrying the
    exchanges of the tasks before it, sent exactly as locally."""
    from llm_aai.protocol.modes import ModeSettings
    from tests.helpers.modes import SCRIPT_REPLIES, by_user_count, request_sequence

    on_cluster, meeting = threading.Event(), threading.Barrier(2, timeout=60)

    def meet_then_reply(body):
        """On Ray, each conversation's first call waits for the other's: they play at once
        (a warm worker on one node could finish its conversation before the other node's
        worker process had started)."""
        if on_cluster.is_set() and _users(body) == 1:
            meeting.wait()
        return by_user_count(body)

    with FakeChatServer(responder=meet_then_reply, latency_s=0.2) as server:
        config = _config(testbed_dir, model="openai/fake", tasks="01-04-03,01-06-02", trials=2,
                         modes=ModeSettings(context="across-tasks"),
                         protocol=dataclasses.replace(PAPER_PROTOCOL, max_scripts=3),
                         model_options=ModelOptions(api_base=server.url, max_retries=0))
        local = start_run(config, out=tmp_path, run_id="local", show_progress=False)
        sent_locally = request_sequence([r.body for r in server.requests])
        del server.requests[:]
        server.max_in_flight = 0
        on_cluster.set()
        whole_cpus = dataclasses.replace(_on_ray(config, ray_cluster), ray_episode_cpus=1.0)
        on_ray = start_run(whole_cpus, out=tmp_path, run_id="ray", show_progress=False)
        sent_on_ray = request_sequence([r.body for r in server.requests])
        peak = server.max_in_flight
    _same_run(local.run_dir, on_ray.run_dir)  # a conversation on each node...
    assert peak == 2  # ...at once
    key = json.dumps
    assert sorted(map(key, sent_on_ray)) == sorted(map(key, sent_locally))
    results = RunStore(on_ray.run_dir).finished_results()
    assert {results[f"01-04-03_t{t}"].scripts_used for t in (1, 2)} == {3}
    first_task_last = [r["messages"] for r in sent_on_ray if _users(r) == 3]
    second_task_first = [r["messages"] for r in sent_on_ray if _users(r) == 4]
    assert len(second_task_first) == 2  # one per conversation
    for messages in second_task_first:  # task 1's exchanges, its frames byte for byte
        assert messages[:-2] in first_task_last
        assert messages[-2] == {"role": "assistant", "parts": [SCRIPT_REPLIES[0]]}


@pytest.mark.slow
def test_a_conversation_interrupted_on_the_cluster_resumes_to_the_uninterrupted_run(
        ray_cluster, testbed_dir, tmp_path, monkeypatch):
    """As locally (tests/runner/test_resume_modes.py): Ctrl-C while the model answers task 2's
    second request; resumed, task 2 plays again from its start, sent task 1's history rebuilt
    from its log, and the run ends as one never interrupted."""
    import itertools
    import os
    import signal
    import threading

    from llm_aai.protocol.modes import ModeSettings
    from llm_aai.runner import RunInterrupted, resume_run
    from tests.helpers.modes import by_user_count, request_sequence, run_record

    resuming = threading.Event()
    asked = []  # each request as it comes (the server records one when it has answered)

    def interrupting(body, count=itertools.count(1)):
        asked.append(body)
        number = next(count)
        if number == 5:  # task 1 took 3 requests: the 2nd of task 2
            os.kill(os.getpid(), signal.SIGINT)
        elif number > 5 and not resuming.is_set():  # the worker waits, as a model would,
            time.sleep(3.0)  # while the driver ends it (its episode must not finish)
        return by_user_count(body)

    def placed_anywhere(run_dir):
        record = run_record(run_dir)
        for episode in record.values():
            for field in ("node_id", "host"):
                episode["result"].pop(field)
        return record

    import ray

    from llm_aai.runner.ray_suite import RaySuite

    lent_after_stop = []  # whether the run's slots lent a slot once it stopped
    stop_lending = RaySuite._stop_lending

    def stop_and_look(suite):  # before the run ends its actors
        stop_lending(suite)
        asking = suite._slots.acquire.remote("after the stop", 8, None, 60.0, {})
        lent_after_stop.append(bool(ray.wait([asking], timeout=1.0)[0]))

    monkeypatch.setattr(RaySuite, "_stop_lending", stop_and_look)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeChatServer(responder=by_user_count) as server:
        config = _config(testbed_dir, model="openai/fake", tasks="01-04-03,01-06-02",
                         modes=ModeSettings(context="across-tasks"),
                         protocol=dataclasses.replace(PAPER_PROTOCOL, max_scripts=3),
                         model_options=ModelOptions(api_base=server.url, max_retries=0))
        whole = start_run(config, out=tmp_path, run_id="whole", show_progress=False).run_dir
        uninterrupted = request_sequence([r.body for r in server.requests])
    with FakeChatServer(responder=interrupting) as server:
        config = dataclasses.replace(config, model_options=ModelOptions(
            api_base=server.url, max_retries=0))
        with pytest.raises(RunInterrupted):
            start_run(_on_ray(config, ray_cluster), out=tmp_path, run_id="cut",
                      show_progress=False)
        cut = tmp_path / "cut"
        assert set(RunStore(cut).finished_results()) == {"01-04-03_t1"}
        assert {p.name for p in (cut / "episodes").iterdir()} == {"01-04-03_t1"}
        assert lent_after_stop == [False]  # the stop lends no slot: no call starts after it
        before = len(asked)  # the worker may have asked once more before the stop
        assert before >= 5
        resuming.set()
        resume_run(cut, show_progress=False)
        resumed = request_sequence(asked[before:])
    assert resumed == uninterrupted[3:]  # task 2 from its start, after task 1's exchanges
    assert placed_anywhere(cut) == placed_anywhere(whole)
    assert {r.node_id for r in RunStore(cut).finished_results().values()} <= _cluster_nodes()
