"""The executors on real worker processes: results as they finish, crashes recorded, interrupts."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from llm_aai.execution import (
    WORKER_DIED,
    InProcessExecutor,
    Job,
    ProcessExecutor,
    interrupt_on_sigterm,
    make_executor,
)
from tests.execution import jobs
from tests.helpers.signals import alive


@pytest.mark.parametrize("executor", [InProcessExecutor(), ProcessExecutor(2)],
                         ids=["in-process", "local"])
def test_every_job_gives_one_outcome_and_a_failure_is_a_crash(executor):
    work = [Job(n, jobs.square, (n,)) for n in range(5)] + [Job("bad", jobs.fail, ("no",))]
    with executor:
        outcomes = {o.job.key: o for o in executor.run(work)}
    assert {k: o.result for k, o in outcomes.items() if not o.crashed} == {
        n: n * n for n in range(5)}
    assert outcomes["bad"].crash == "RuntimeError: no"


def test_a_job_that_kills_its_worker_is_retried_alone_once_then_recorded(tmp_path):
    tally = tmp_path / "tally"
    work = [Job("killer", jobs.die, (str(tally),))] + [Job(n, jobs.square, (n,))
                                                       for n in range(6)]
    with ProcessExecutor(2) as executor:
        outcomes = {o.job.key: o for o in executor.run(work)}
        # the pool is rebuilt: the executor goes on serving
        assert [o.result for o in executor.run([Job(9, jobs.square, (9,))])] == [81]
    assert outcomes["killer"].crash == WORKER_DIED
    assert {k: o.result for k, o in outcomes.items() if k != "killer"} == {
        n: n * n for n in range(6)}
    assert tally.read_text().count("run") == 2  # with the others, then alone: never again


def _signal_once_running(pid_file, signum) -> threading.Thread:
    """Send ``signum`` to this process once the worker has started its job."""
    def send() -> None:
        deadline = time.monotonic() + 60
        while not pid_file.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(os.getpid(), signum)

    thread = threading.Thread(target=send, daemon=True)
    thread.start()
    return thread


@pytest.fixture
def python_ctrl_c():
    """SIGINT raising KeyboardInterrupt, as in a terminal: a shell's background job (`cmd &`)
    inherits SIGINT ignored, and Python then installs no handler for it."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
@pytest.mark.usefixtures("python_ctrl_c")
def test_a_signal_is_an_interrupt_that_ends_the_workers(signum, tmp_path):
    pid_file = tmp_path / "pid"
    before = signal.getsignal(signal.SIGTERM)
    executor = ProcessExecutor(1)
    started = time.monotonic()
    sender = _signal_once_running(pid_file, signum)
    with pytest.raises(KeyboardInterrupt), interrupt_on_sigterm(), executor:
        for outcome in executor.run([Job("slow", jobs.sleep_then, (60, str(pid_file))),
                                     Job("quick", jobs.square, (3,))]):
            if outcome.job.key == "slow":
                raise AssertionError(f"the slow job should not finish: {outcome}")
    sender.join()
    assert time.monotonic() - started < 30
    worker = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while alive(worker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(worker)
    assert signal.getsignal(signal.SIGTERM) is before  # the previous handler is back


def test_an_unknown_executor_is_named():
    with pytest.raises(ValueError, match="unknown executor .cluster.; the executors are local"):
        make_executor("cluster", 2)
