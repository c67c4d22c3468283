"""SIGTERM (a cluster scheduler's preemption) stops a run as Ctrl-C does: cleanly, resumably."""

from __future__ import annotations

import signal
import subprocess
import time

from llm_aai.llm.fake_server import FakeChatServer
from llm_aai.logs import RunStore
from tests.helpers.runs import keyless_env, run_module
from tests.helpers.signals import has_lines, start_module, stop, wait_until


def test_sigterm_stops_at_the_next_turn_and_prints_the_resume_command(testbed_dir, tmp_path):
    tasks = "01-04-03,01-06-02,02-02-01"
    run_dir = tmp_path / "r"
    with FakeChatServer(default="Turn(30);", latency_s=0.5) as server:
        process = _start_and_wait_for_turns(server, testbed_dir, tmp_path, tasks)
        asked_before = len(server.requests)
        _, stderr = stop(process, signal.SIGTERM)
        # the next turn, not the rest of the episodes: at most the reply each of the 2
        # episodes in flight was waiting for (and one racing the signal); counted, not timed
        assert len(server.requests) - asked_before <= 4
        assert process.returncode == 143, stderr
        assert "terminated (SIGTERM)" in stderr and "Traceback" not in stderr
        assert f"continue with --resume {run_dir}" in stderr
        store = RunStore(run_dir)
        sealed = set(store.finished_results())
        assert len(sealed) < 3
        rows = (run_dir / "summary.csv").read_text().splitlines()[1:]
        assert sorted(row.split(",")[0] for row in rows) == sorted(sealed)
        for turn_log in run_dir.glob("episodes/*/turns.jsonl"):  # every line whole
            assert turn_log.read_text().endswith("\n") or not turn_log.read_text()
        resumed = run_module("llm_aai.run", "--resume", run_dir, "--api-base", server.url,
                             "--no-progress", env=keyless_env(), timeout=240)
    assert resumed.returncode == 0, resumed.stderr
    assert set(store.finished_results()) == {"01-04-03_t1", "01-06-02_t1", "02-02-01_t1"}


def _start_and_wait_for_turns(server, testbed_dir, tmp_path,
                              tasks: str = "01-04-03,01-06-02", **popen) -> subprocess.Popen:
    """A 30-script run of ``tasks``, two at once, once the second task has played a turn."""
    process = start_module(
        "llm_aai.run", "--model", "openai/fake", "--api-base", server.url, "--tasks", tasks,
        "--arenas-dir", testbed_dir, "--out", tmp_path, "--run-id", "r", "--resolution", 64,
        "--max-scripts", 30, "--concurrency", 2, "--no-progress", env=keyless_env(), **popen)
    wait_until(has_lines(tmp_path / "r" / "episodes" / "01-06-02_t1" / "turns.jsonl", 2),
               process)
    return process


def _signal_until_it_exits(process: subprocess.Popen, signum: int) -> tuple[int, str]:
    """Send ``signum`` every 0.05 s until the process has exited; how many, and its stderr."""
    sent = 0
    while process.poll() is None and sent < 600:
        process.send_signal(signum)
        sent += 1
        time.sleep(0.05)
    _, stderr = process.communicate(timeout=180)
    return sent, stderr


def test_sighup_stops_the_run_as_sigterm_does(testbed_dir, tmp_path):
    """A closed terminal or a dropped SSH session: stopped cleanly, said, resumable."""
    with FakeChatServer(default="Turn(30);", latency_s=0.5) as server:
        process = _start_and_wait_for_turns(server, testbed_dir, tmp_path)
        _, stderr = stop(process, signal.SIGHUP)
    assert process.returncode == 129, stderr  # 128 + SIGHUP, as a shell reports it
    assert "hung up (SIGHUP)" in stderr and "Traceback" not in stderr
    assert f"continue with --resume {tmp_path / 'r'}" in stderr


def test_more_sigterms_while_stopping_do_not_kill_the_run(testbed_dir, tmp_path):
    """A scheduler or an impatient user sending SIGTERM again until the run has exited."""
    with FakeChatServer(default="Turn(30);", latency_s=0.5) as server:
        process = _start_and_wait_for_turns(server, testbed_dir, tmp_path)
        sent, stderr = _signal_until_it_exits(process, signal.SIGTERM)
    assert sent > 1
    assert process.returncode == 143, stderr  # not -15: killed by a later one
    assert "terminated (SIGTERM)" in stderr and "Traceback" not in stderr


def test_a_stop_sends_none_of_the_calls_waiting_for_the_providers_rate(testbed_dir, tmp_path):
    """With ``--provider-rpm 1`` every call after the first waits about a minute for its
    turn; a stop ends those waits at once, and none of them is sent afterwards."""
    run_dir = tmp_path / "r"
    with FakeChatServer(default="Turn(30);") as server:
        process = start_module(
            "llm_aai.run", "--model", "openai/fake", "--api-base", server.url,
            "--tasks", "01-04-03,02-02-01", "--arenas-dir", testbed_dir, "--out", tmp_path,
            "--run-id", "r", "--resolution", 64, "--max-scripts", 5, "--concurrency", 2,
            "--provider-rpm", 1, "--no-progress", env=keyless_env())
        started = [run_dir / "episodes" / task / "turns.jsonl"
                   for task in ("01-04-03_t1", "02-02-01_t1")]
        # both episodes past their set-up (turn 0 written), the window's one call answered
        wait_until(lambda: all(has_lines(path, 1)() for path in started)
                   and len(server.requests) == 1, process)
        time.sleep(1.0)  # the other calls are now waiting for the window
        _, stderr = stop(process, signal.SIGTERM, timeout=45)  # the window is 60 s
        sent = len(server.requests)
    assert process.returncode == 143, stderr
    assert "Traceback" not in stderr and f"continue with --resume {run_dir}" in stderr
    assert sent == 1
    assert not RunStore(run_dir).finished_results()  # both unfinished: resume plays them


def _sigint_as_a_terminal_sends_it() -> None:
    """In the child: SIGINT's default action, whatever this test process inherited (a shell's
    background job ignores it, and a child would inherit that)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_more_ctrl_cs_while_stopping_do_not_cut_the_stop_short(testbed_dir, tmp_path):
    """An impatient user pressing Ctrl-C again and again: the first stops the run, the rest
    are ignored, so the episodes in flight end at their turn and the summary is whole."""
    run_dir = tmp_path / "r"
    with FakeChatServer(default="Turn(30);", latency_s=0.5) as server:
        process = _start_and_wait_for_turns(server, testbed_dir, tmp_path,
                                            preexec_fn=_sigint_as_a_terminal_sends_it)
        sent, stderr = _signal_until_it_exits(process, signal.SIGINT)
        resumed = run_module("llm_aai.run", "--resume", run_dir, "--api-base", server.url,
                             "--no-progress", env=keyless_env(), timeout=240)
    assert sent > 1
    assert process.returncode == 130, stderr
    assert "interrupted" in stderr and "Traceback" not in stderr
    assert f"continue with --resume {run_dir}" in stderr
    assert resumed.returncode == 0, resumed.stderr
    assert set(RunStore(run_dir).finished_results()) == {"01-04-03_t1", "01-06-02_t1"}
