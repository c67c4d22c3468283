"""Over ``ray://`` (Ray Client), as a user reaches a remote cluster from a laptop: ``run`` with
a built-in agent and with a model over real HTTP, the audit and ``variants make``, each as a
command giving what the same command gives with ``--executor local``.

The head (with its Ray Client server) runs in a folder of its own, as a remote head does, and
the commands in another with relative paths, as a user types them: a Ray worker runs in its
node's folder, never the command's."""

from __future__ import annotations

import json
import re
import signal
from pathlib import Path

import pytest

from llm_aai.execution import LOCAL_NODE
from llm_aai.llm.fake_server import FakeChatServer
from llm_aai.logs import RunStore
from llm_aai.variants.index import INDEX_FILE, PLACEMENT_COLUMNS, read_rows
from tests.helpers.ray_heads import ray_head
from tests.helpers.ray_runs import episode_logs, summary_rows, without_timing
from tests.helpers.runs import audit_rows, keyless_env, run_module
from tests.helpers.signals import start_module, stop, wait_until

NODE_ID = re.compile(r"[0-9a-f]{56}")


@pytest.fixture(scope="module")
def client_head(tmp_path_factory):
    """A two-CPU Ray head with a Ray Client server, in a folder nobody's command runs in."""
    pytest.importorskip("ray")
    folder = tmp_path_factory.mktemp("head")
    with ray_head(cpus=2, cwd=folder) as head:
        yield head, folder


@pytest.fixture
def user_folder(tmp_path, testbed_dir) -> Path:
    """The user's folder: the testbed reachable as ``arenas``, the commands' relative paths."""
    (tmp_path / "arenas").symlink_to(testbed_dir)
    return tmp_path


def _command(module: str, *args, cwd: Path) -> str:
    """Run ``python -m module args`` in ``cwd`` as a user would; its standard error."""
    done = run_module(module, *args, cwd=cwd, env=keyless_env(), timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stderr


def _over_ray_client(head) -> list[str]:
    return ["--executor", "ray", "--ray-address", head.client]


def _same_run(local_dir: Path, ray_dir: Path, tasks: int) -> None:
    local_rows, ray_rows = summary_rows(local_dir), summary_rows(ray_dir)
    assert len(local_rows) == tasks
    assert without_timing(local_rows) == without_timing(ray_rows)
    assert episode_logs(local_dir) == episode_logs(ray_dir)
    assert {row["node_id"] for row in local_rows} == {LOCAL_NODE}
    assert all(NODE_ID.fullmatch(row["node_id"]) and row["host"] for row in ray_rows)
    config = json.loads((ray_dir / "manifest.json").read_text())["run"]["config"]
    assert config["executor"] == "ray" and config["ray_address"].startswith("ray://")


RUN = ["--tasks", "01-01-01,01-04-03", "--full-testbed", "--arenas-dir", "arenas", "--out",
       "runs", "--seed", 7, "--resolution", 64, "--concurrency", 2, "--no-progress"]


@pytest.mark.slow
def test_a_built_in_agent_s_run_over_ray_client_plays_as_locally(client_head, user_folder):
    head, _ = client_head
    common = ["--model", "heuristic", *RUN, "--max-scripts", 4]
    _command("llm_aai.run", *common, "--run-id", "local", cwd=user_folder)
    _command("llm_aai.run", *common, "--run-id", "ray", *_over_ray_client(head), cwd=user_folder)
    _same_run(user_folder / "runs" / "local", user_folder / "runs" / "ray", tasks=2)
    assert [row["passed"] for row in summary_rows(user_folder / "runs" / "ray")] == [
        "True", "False"]  # one passed, one not: both outcomes came back


@pytest.mark.slow
def test_a_model_s_run_over_ray_client_stops_resumes_and_plays_as_locally(client_head,
                                                                          user_folder):
    """The provider slots, the stop gate and the cache are actors the command starts over Ray
    Client. SIGTERM stops the run as locally and ``--resume`` finishes it on the same cluster,
    one call at a time as ``--provider-concurrency 1`` asks. The cache the resume is given
    (``--cache relcache``, relative as a user types it) is the folder the command names, not
    one in the head's folder."""
    head, head_folder = client_head
    runs = user_folder / "runs"
    with FakeChatServer(default="Turn(30);\nGo(20);", latency_s=0.5) as server:
        common = ["--model", "openai/fake", "--api-base", server.url, *RUN, "--max-scripts", 2,
                  "--provider-concurrency", 1]
        _command("llm_aai.run", *common, "--run-id", "local", cwd=user_folder)
        asked, server.max_in_flight = len(server.requests), 0
        process = start_module("llm_aai.run", *common, "--run-id", "ray",
                               *_over_ray_client(head), cwd=user_folder, env=keyless_env())
        try:  # one call of the run's answered: the others would take 1.5 s more at least
            wait_until(lambda: len(server.requests) > asked, process, timeout=120)
        except AssertionError as failed:
            process.kill()
            raise AssertionError(process.communicate()[1]) from failed
        _, stderr = stop(process, signal.SIGTERM)
        assert process.returncode == 143, stderr  # as a local run's SIGTERM
        assert "continue with --resume runs/ray" in stderr and "Traceback" not in stderr
        assert len(RunStore(runs / "ray").finished_results()) < 2
        before_resume = len(server.requests)
        _command("llm_aai.run", "--resume", runs / "ray", "--cache", "relcache",
                 cwd=user_folder)
        resumed = len(server.requests) - before_resume
        assert server.max_in_flight == 1
    _same_run(runs / "local", runs / "ray", tasks=2)
    assert resumed > 0 and len(list((user_folder / "relcache").glob("*/*.json"))) == resumed
    assert not (head_folder / "relcache").exists()


def _unplaced(rows: list[dict]) -> list[dict]:
    return sorted(({k: v for k, v in row.items() if k not in {"search_seconds",
                                                              *PLACEMENT_COLUMNS}}
                   for row in rows), key=json.dumps)


@pytest.mark.slow
def test_the_audit_over_ray_client_gives_the_local_rows(client_head, user_folder):
    head, _ = client_head
    common = ["--tasks", "01-01-01", "--arenas-dir", "arenas", "--oracle-budget", 300,
              "--no-other-build", "--no-progress"]
    _command("llm_aai.audit", "--out", "local", *common, cwd=user_folder)
    _command("llm_aai.audit", "--out", "ray", *common, *_over_ray_client(head), cwd=user_folder)
    local, on_ray = audit_rows(user_folder / "local"), audit_rows(user_folder / "ray")
    assert len(local) == 1 and _unplaced(local) == _unplaced(on_ray)
    assert all(NODE_ID.fullmatch(row["node_id"]) for row in on_ray)


@pytest.mark.slow
def test_variants_made_over_ray_client_are_the_local_ones(client_head, user_folder):
    """The workers write the variants into ``--out`` (relative here): the command's folder."""
    head, _ = client_head
    common = ["make", "01-04-03", "--count", 1, "--seed", 5, "--arenas-dir", "arenas"]
    _command("llm_aai.variants", *common, "--out", "local", cwd=user_folder)
    _command("llm_aai.variants", *common, "--out", "ray", *_over_ray_client(head),
             cwd=user_folder)
    local, on_ray = read_rows(user_folder / "local"), read_rows(user_folder / "ray")
    assert sum(row["outcome"] == "kept" for row in on_ray) == 1
    assert _unplaced(on_ray) == _unplaced(local)
    files = [{path.name: path.read_bytes() for path in sorted(folder.iterdir())
              if path.name != INDEX_FILE} for folder in (user_folder / "local",
                                                         user_folder / "ray")]
    assert files[0] == files[1] and len(files[0]) > 1  # the variant and the request
    assert all(NODE_ID.fullmatch(row["node_id"]) for row in on_ray)
