"""Shared fixtures: where the workplace's read-only reference material lives."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers.modes import mode_arena, run_mode  # noqa: F401 (fixtures for every test)

os.environ.setdefault("MUJOCO_GL", "egl")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
# No test downloads from the internet: a testbed cache found empty (the first use) fetches from
# this port nobody listens on (connection refused at once), unless a test names its own mirror.
os.environ["LLM_AAI_TESTBED_SOURCE"] = "http://127.0.0.1:9/no-network-in-tests"

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("LLM_AAI_SHARED", REPO.parent / "shared"))
TESTBED = SHARED / "testbed" / "competition"
RECORDING = SHARED / "fixtures" / "unity-tutorial-recording"


@pytest.fixture(scope="session", autouse=True)
def user_config_home(tmp_path_factory) -> Path:
    """A config folder of the session's own (``XDG_CONFIG_HOME``), for runs and subprocesses.

    Runs made by tests keep their routing mark's key there (``llm_aai.runner.routing``), not
    in the user's own config folder.
    """
    folder = tmp_path_factory.mktemp("config-home")
    os.environ["XDG_CONFIG_HOME"] = str(folder)
    os.environ["LLM_AAI_CONFIG_DIR"] = str(folder / "llm-aai")  # macOS ignores XDG's
    return folder


def _require(path: Path) -> Path:
    if not path.exists():
        pytest.fail(f"reference material missing: {path} (set LLM_AAI_SHARED to shared/)")
    return path


@pytest.fixture(scope="session")
def testbed_dir() -> Path:
    """The 900 official testbed arenas (read-only, never vendored)."""
    return _require(TESTBED)


@pytest.fixture(scope="session")
def recording_dir() -> Path:
    """The real Unity recording used as ground truth for the simulator."""
    return _require(RECORDING)


@pytest.fixture(scope="session")
def ray_cluster():
    """A real two-node Ray cluster on loopback (a head and a worker, one CPU and 100 MB of
    object store each), started once for every test that asks for it; the driver joined."""
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    ray = pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    node = {"num_cpus": 1, "object_store_memory": 100 * 1024 * 1024}
    cluster = Cluster(initialize_head=True, head_node_args={**node, "include_dashboard": False})
    cluster.add_node(**node)
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, log_to_driver=False)
    yield cluster
    ray.shutdown()
    cluster.shutdown()
