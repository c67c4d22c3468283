"""The Ray executor on a real multi-node Ray cluster on this machine (a head and worker nodes
on loopback, ``ray.cluster_utils.Cluster``), and its message when Ray is not installed."""

from __future__ import annotations

import dataclasses
import sys
import time

import pytest

from llm_aai.arena.catalog import select_tasks
from llm_aai.audit import AuditSettings, run_audit
from llm_aai.cli import audit as audit_cli
from llm_aai.execution import LOCAL_NODE, WORKER_DIED, Job, RayUnavailable, make_executor
from llm_aai.execution.ray_executor import RETRIES, RayExecutor
from tests.execution import jobs

MB = 1024 * 1024


def test_without_ray_the_executor_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # an import of ray now fails
    with pytest.raises(RayUnavailable, match=r"pip install 'llm-aai\[ray\]'"):
        make_executor("ray", 2)


def test_without_ray_the_audit_command_says_how_to_install(monkeypatch, tmp_path, capsys,
                                                           testbed_dir):
    monkeypatch.setitem(sys.modules, "ray", None)
    code = audit_cli.main(["--out", str(tmp_path / "a"), "--tasks", "01-01-01", "--arenas-dir",
                           str(testbed_dir), "--executor", "ray", "--no-progress"])
    assert code == 2
    assert "pip install 'llm-aai[ray]'" in capsys.readouterr().err


def test_a_cluster_address_needs_the_ray_executor():
    with pytest.raises(ValueError, match="--ray-address\\) needs --executor ray"):
        make_executor("local", 1, "127.0.0.1:6379")


@pytest.fixture
def cluster(ray_cluster):
    """The session's two-node cluster (tests/conftest.py)."""
    return ray_cluster


def _without_placement(row):
    return dataclasses.replace(row, search_seconds=None, node_id="", host="")


@pytest.mark.slow
def test_the_audit_gives_the_same_rows_on_the_cluster_as_locally(cluster, testbed_dir, tmp_path):
    tasks = list(select_tasks(tasks="01-01-01,01-04-03", full=True))
    settings = AuditSettings(budget=1500)
    common = {"arenas_dir": testbed_dir, "workers": 2}
    local = run_audit(tasks, 2, tmp_path / "local", settings, **common)
    on_ray = run_audit(tasks, 2, tmp_path / "ray", settings, executor="ray",
                       address=cluster.address, **common)
    key = lambda row: (row.task_id, row.seed)  # noqa: E731
    assert ([_without_placement(r) for r in sorted(local, key=key)]
            == [_without_placement(r) for r in sorted(on_ray, key=key)])
    assert {row.node_id for row in local} == {LOCAL_NODE}
    cluster_nodes = {node["NodeID"] for node in __import__("ray").nodes() if node["Alive"]}
    assert {row.node_id for row in on_ray} <= cluster_nodes
    assert all(row.host for row in on_ray)
    # the CSV round trip keeps where each row ran
    written = (tmp_path / "ray" / "audit.csv").read_text()
    assert all(row.node_id in written for row in on_ray)


@pytest.mark.slow
def test_jobs_spread_over_both_nodes(cluster):
    with RayExecutor(2, cluster.address) as executor:
        outcomes = list(executor.run(Job(n, jobs.nap, (0.5,)) for n in range(4)))
    assert sorted(o.job.key for o in outcomes) == [0, 1, 2, 3]
    assert not any(o.crashed for o in outcomes)
    assert len({o.node_id for o in outcomes}) == 2  # one CPU per node: both had to work


@pytest.mark.slow
def test_a_crashing_job_is_recorded_after_a_bounded_number_of_tries(cluster, tmp_path):
    tally = tmp_path / "tally"
    with RayExecutor(2, cluster.address) as executor:
        outcomes = {o.job.key: o for o in executor.run(
            [Job("dies", jobs.die, (str(tally),)), Job("fine", jobs.square, (3,)),
             Job("raises", jobs.fail, ("bad arena",))])}
    assert outcomes["dies"].crash == WORKER_DIED
    assert len(tally.read_text().splitlines()) == 1 + RETRIES  # never retried for ever
    assert outcomes["fine"].result == 9
    assert outcomes["raises"].crash == "RuntimeError: bad arena"  # an error is not retried


@pytest.mark.slow
def test_a_node_lost_mid_run_costs_no_job_and_duplicates_none(cluster):
    doomed = cluster.add_node(num_cpus=1, object_store_memory=100 * MB)
    cluster.wait_for_nodes()
    doomed_id = doomed.node_id
    seen: list = []
    with RayExecutor(3, cluster.address) as executor:
        # A job on the doomed node naps for 20 s, elsewhere for 1 s: when the first outcome
        # arrives, the doomed node is in the middle of its job (every CPU is busy).
        naps = (Job(n, jobs.nap_longer_on, (doomed_id, 20.0, 1.0)) for n in range(9))
        for outcome in executor.run(naps):
            if not seen:
                cluster.remove_node(doomed, allow_graceful=False)
            seen.append(outcome)
    assert sorted(o.job.key for o in seen) == list(range(9))
    assert not any(o.crashed for o in seen)
    assert doomed_id not in {o.node_id for o in seen[1:]}


@pytest.mark.slow
def test_an_interrupt_stops_the_tasks_in_flight(cluster, tmp_path):
    marks = [tmp_path / f"job-{n}" for n in range(5)]
    work = [Job(0, jobs.square, (2,))] + [Job(n, jobs.nap_then_mark, (3.0, str(mark)))
                                          for n, mark in enumerate(marks, 1)]
    with RayExecutor(2, cluster.address, in_flight=3) as executor:
        outcomes = executor.run(work)
        first = next(outcomes)  # the quick one; the naps are in flight now
        with pytest.raises(KeyboardInterrupt):
            outcomes.throw(KeyboardInterrupt)  # Ctrl-C while the caller records
    assert first.result == 4
    time.sleep(4)  # long enough for any surviving nap to have finished
    assert not any(mark.exists() for mark in marks)


_SIGTERM_AFTER_JOINING = """
import os, signal, sys
from llm_aai.execution.ray_executor import connect

def stop(signum, frame):
    raise KeyboardInterrupt

signal.signal(signal.SIGTERM, stop)  # as the run and the audit commands do
connect(sys.argv[1], 1)
try:
    os.kill(os.getpid(), signal.SIGTERM)
    signal.pause()
except KeyboardInterrupt:
    print("stopped cleanly")
"""


@pytest.mark.slow
def test_joining_a_cluster_keeps_the_commands_sigterm_handler(cluster):
    """Ray's core installs its own SIGTERM handler, which aborts the process; a command
    stopped by a scheduler must stop as it does locally (cleanly, resumably)."""
    import subprocess

    done = subprocess.run([sys.executable, "-c", _SIGTERM_AFTER_JOINING, cluster.address],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "stopped cleanly" in done.stdout


def _closed_port() -> int:
    """A port of this machine that nothing listens on (bound once, then released)."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


COMMANDS = pytest.mark.parametrize("command", [
    ["llm_aai.audit", "--out", "{out}", "--tasks", "01-01-01", "--no-progress"],
    ["llm_aai.variants", "make", "01-04-03", "--count", "1", "--out", "{out}"],
    ["llm_aai.run", "--model", "heuristic", "--tasks", "01-04-03", "--out", "{out}",
     "--no-progress"],
], ids=["audit", "variants-make", "run"])
"""The three commands that take --ray-address, each as it would fail there."""


def _refused_fast(command, address, testbed_dir, tmp_path, env=None) -> str:
    """Run ``command`` on Ray at ``address``; check it fails in seconds with one line (exit 2)
    and, for a run, before its directory is made. Returns that line."""
    import subprocess

    pytest.importorskip("ray")
    argv = [part.replace("{out}", str(tmp_path / "out")) for part in command]
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", *argv, "--arenas-dir", str(testbed_dir),
                           "--executor", "ray", "--ray-address", address],
                          capture_output=True, text=True, timeout=60, env=env)
    elapsed = time.monotonic() - started
    assert done.returncode == 2, done.stderr
    assert elapsed < 30
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    if argv[0] == "llm_aai.run":  # a run refuses before it makes its directory
        assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
    return lines[0]


@COMMANDS
def test_an_unreachable_cluster_address_fails_fast_naming_it(command, testbed_dir, tmp_path):
    """Ray's driver retries an address nobody answers at for minutes (over 200 s): a mistyped
    --ray-address must say so at once instead of looking like a hung command."""
    address = f"127.0.0.1:{_closed_port()}"
    line = _refused_fast(command, address, testbed_dir, tmp_path)
    assert f"--ray-address {address}: no Ray cluster answers there" in line


def _without_a_recorded_cluster(tmp_path, **variables) -> dict[str, str]:
    """This environment with Ray's temporary folder empty (no cluster another test or person
    started on this machine is found) and no RAY_ADDRESS, plus ``variables``."""
    import os

    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    return {**env, "RAY_TMPDIR": str(tmp_path / "raytmp"), **variables}


@COMMANDS
def test_auto_with_no_cluster_to_find_fails_fast_naming_it(command, testbed_dir, tmp_path):
    """Ray itself would wait out its retries (or join any Ray it finds running here)."""
    line = _refused_fast(command, "auto", testbed_dir, tmp_path,
                         _without_a_recorded_cluster(tmp_path))
    assert "--ray-address auto: no Ray cluster to join (RAY_ADDRESS is not set" in line


@pytest.mark.slow
def test_auto_joins_the_cluster_ray_address_names(cluster, testbed_dir, tmp_path):
    import subprocess

    from tests.helpers.runs import audit_rows

    out = tmp_path / "audit"
    done = subprocess.run(
        [sys.executable, "-m", "llm_aai.audit", "--out", str(out), "--tasks", "01-01-01",
         "--arenas-dir", str(testbed_dir), "--oracle-budget", "300", "--no-other-build",
         "--no-progress", "--executor", "ray", "--ray-address", "auto"],
        capture_output=True, text=True, timeout=300,
        env=_without_a_recorded_cluster(tmp_path, RAY_ADDRESS=cluster.address))
    assert done.returncode == 0, done.stderr
    cluster_nodes = {node["NodeID"] for node in __import__("ray").nodes() if node["Alive"]}
    assert [row["node_id"] in cluster_nodes for row in audit_rows(out)] == [True]


@pytest.mark.slow
def test_audit_and_variant_jobs_reserve_a_whole_cpu(cluster):
    """They simulate flat out (the oracle's search): one job per CPU, unlike a run's model
    episodes (``--ray-episode-cpus``)."""
    with make_executor("ray", 2, cluster.address) as executor:
        outcomes = list(executor.run([Job(0, jobs.assigned_cpus, ())]))
    assert outcomes[0].result == 1.0


AUDIT_TASKS = ("01-01-01,01-02-01,01-03-01,01-04-03,01-05-01,01-06-02,02-01-01,02-02-01,"
               "02-03-01,02-04-01")


@pytest.mark.slow
def test_a_sigterm_stops_a_ray_audit_cleanly_and_the_same_command_resumes(
        cluster, testbed_dir, tmp_path, capsys):
    """The scheduler's stop of an audit on a cluster: the local audit's exit code, the rows
    that finished kept, no traceback; the same command then plays the rest, each once."""
    import signal

    from llm_aai.audit.run import read_rows
    from tests.helpers.signals import has_lines, start_module, stop, wait_until

    out = tmp_path / "audit"
    argv = ["--out", str(out), "--tasks", AUDIT_TASKS, "--seeds", "2", "--oracle-budget",
            "1500", "--no-other-build", "--arenas-dir", str(testbed_dir), "--workers", "2",
            "--no-progress", "--executor", "ray", "--ray-address", cluster.address]
    process = start_module("llm_aai.audit", *argv)
    wait_until(has_lines(out / "audit.csv", 2), process, timeout=120)  # a header and a row
    _, stderr = stop(process, signal.SIGTERM, timeout=60)
    assert process.returncode == 130, stderr  # as the local audit answers SIGTERM
    assert "interrupted; finished episodes are in" in stderr
    assert "Traceback" not in stderr
    kept = [(row.task_id, row.seed) for row in read_rows(out)]
    episodes = len(AUDIT_TASKS.split(",")) * 2
    assert 1 <= len(kept) < episodes and len(set(kept)) == len(kept)
    assert audit_cli.main(argv) == 0  # the same command, to the end
    capsys.readouterr()
    rows = read_rows(out)
    assert sorted((row.task_id, row.seed) for row in rows) == sorted(
        (task, seed) for task in AUDIT_TASKS.split(",") for seed in (1, 2))  # each once
    assert set(kept) <= {(row.task_id, row.seed) for row in rows}
