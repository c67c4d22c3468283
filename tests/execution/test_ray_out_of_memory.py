"""A worker killed by Ray's memory monitor is recorded as lost (a job's crash, an episode's
infrastructure end), never raised out of the audit or the run.

Ray replays such a task without limit unless the cluster bounds it (``task_oom_retries``), so
the exception reaches the driver only on a cluster that does; the test starts one (its own
Ray, in a fresh interpreter, as the system settings are read when Ray starts) whose monitor
kills any worker that takes a few GB beyond what the machine uses now.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from llm_aai.execution import WORKER_OUT_OF_MEMORY

REPO = Path(__file__).resolve().parents[2]

_SCRIPT = """
import dataclasses, json, sys
from pathlib import Path
from ray.cluster_utils import Cluster

from llm_aai.execution import Job
from llm_aai.execution.ray_executor import RayExecutor
from llm_aai.logs import RunStore
from llm_aai.protocol import PAPER_PROTOCOL
from llm_aai.runner import RunConfig, executors, start_run
from llm_aai.runner.ray_suite import RaySuite
from tests.execution import jobs
from tests.runner.ray_jobs import HoggingHeuristic

testbed, out = sys.argv[1], Path(sys.argv[2])
meminfo = dict(line.split(":") for line in Path("/proc/meminfo").read_text().splitlines())
total = int(meminfo["MemTotal"].split()[0])
used = (total - int(meminfo["MemAvailable"].split()[0])) / total
cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 2, "_system_config": {
    "memory_usage_threshold": used + 2.0 * 2**20 / total,  # 2 GiB above today's use
    "memory_monitor_refresh_ms": 100, "task_oom_retries": 0}})
try:
    with RayExecutor(2, cluster.address) as executor:
        crashes = {o.job.key: o.crash for o in executor.run(
            [Job("hog", jobs.hog, (4096, 60)), Job("fine", jobs.square, (3,))])}

    class Hogging(RaySuite):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.make_agent = lambda: HoggingHeuristic(4096, 60)

    executors.SUITES["ray"] = Hogging
    config = RunConfig(model="heuristic", tasks="01-04-03", trials=1, seed=7,
                       arenas_dir=testbed, resolution=64, concurrency=1, max_relaunches=0,
                       protocol=dataclasses.replace(PAPER_PROTOCOL, max_scripts=2),
                       executor="ray", ray_address=cluster.address)
    outcome = start_run(config, out=out, run_id="r", show_progress=False)
    result = RunStore(outcome.run_dir).finished_results()["01-04-03_t1"]
    print(json.dumps({"crashes": crashes, "end_reason": result.end_reason,
                      "infra_error": result.infra_error}))
finally:
    cluster.shutdown()
"""


@pytest.mark.slow
def test_a_worker_the_memory_monitor_kills_is_recorded_as_lost(testbed_dir, tmp_path):
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    done = subprocess.run([sys.executable, "-c", _SCRIPT, str(testbed_dir), str(tmp_path)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.splitlines()[-1])

    assert seen["crashes"] == {"hog": WORKER_OUT_OF_MEMORY, "fine": None}
    assert seen["end_reason"] == "infrastructure"
    assert seen["infra_error"].startswith(f"crash: {WORKER_OUT_OF_MEMORY} (OutOfMemoryError")
