"""The stop gate: a Ray task returns only with leave, so a stop never cancels a task whose
reply may be on its way (what aborts the driver inside Ray's core)."""

from __future__ import annotations

import pytest

from llm_aai.execution.ray_stop import StopGate, gated_call, start_gate, stop_tasks
from tests.execution import jobs


def test_a_task_with_leave_is_never_refused_and_a_refused_one_never_gets_leave():
    gate = StopGate()
    assert gate.may_return("done")
    assert gate.refuse(["done", "running", "queued"]) == ["running", "queued"]
    assert not gate.may_return("running")  # it finished its work after the stop: it waits
    assert gate.may_return("later")  # a task the stop did not name is not refused
    assert gate.refuse(["done"]) == []


@pytest.mark.slow
def test_a_refused_task_sends_no_reply_and_a_task_with_leave_is_left_to_finish(ray_cluster,
                                                                              tmp_path):
    import ray

    gate = start_gate(ray)
    run = ray.remote(num_cpus=1, max_retries=0)(gated_call)
    try:
        mark = tmp_path / "mark"
        refused = run.remote(gate, "refused", jobs.nap_then_mark, (6.0, str(mark)))
        finished = run.remote(gate, "finished", jobs.square, (3,))
        assert ray.get(finished, timeout=60) == 9  # given leave as it returned
        assert not mark.exists()  # the nap is still at work: it has not asked for leave
        assert ray.get(gate.refuse.remote(["refused", "finished"])) == ["refused"]
        ready, _ = ray.wait([refused], timeout=10)
        assert mark.exists() and not ready  # its work is done, but it does not reply
        stop_tasks(ray, gate, {"refused": refused, "finished": finished})  # cancels one
        ready, _ = ray.wait([refused], timeout=60)
        assert ready
        with pytest.raises(ray.exceptions.TaskCancelledError):
            ray.get(refused)
    finally:
        ray.kill(gate)


@pytest.mark.slow
def test_a_task_waiting_for_its_leave_keeps_its_cpu(ray_cluster):
    """Ray lends the CPU of a task blocked in ``ray.get`` on its main thread: had the task
    asked the gate from there, the next task would start on that CPU while it waits."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    gate = ray.remote(jobs.SlowGate).options(num_cpus=0).remote(3.0)
    one_cpu = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False)
    run = ray.remote(num_cpus=1, max_retries=0)(gated_call).options(scheduling_strategy=one_cpu)
    try:
        first, second = sorted(ray.get([run.remote(gate, token, jobs.when, ())
                                        for token in ("a", "b")], timeout=120))
        assert second - first >= 2.5  # after the first's 3 s wait for leave, not during it
    finally:
        ray.kill(gate)
