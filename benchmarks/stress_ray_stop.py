"""Stress test of the Ray executor's stop: interrupt a driver at random moments, many times.

Run from the repository root (Ray installed, ``pip install 'llm-aai[ray]'``)::

    python -m benchmarks.stress_ray_stop [--tries 40] [--method gate|cancel] [--seed 0]
    python -m benchmarks.stress_ray_stop --mode crossing [--tries 10] [--count 200]

The default mode (``stops``) starts a two-node Ray cluster on this machine
(``ray.cluster_utils.Cluster``, two CPUs per node) and, for each try, a driver subprocess
that joins it and feeds a ``RayExecutor`` a stream of jobs: mostly short ones of about the
same length (so replies arrive in waves, the moment a stop can cross), every fourth one long
(so a stop finds jobs to end). Each job writes a heartbeat line (the wall time) to its own
file every 10 ms. After a random number of results (1 to 30) and a random delay (0 to 50 ms)
the driver sends itself SIGINT (Ctrl-C), wherever it is; it must then exit with 130 and
write the moment its executor's stop returned.

Per try the parent counts: an **abort** (any other exit: 1 when Ray's core hits
"Tried to complete task that was not pending"), and the **tasks that continued**: jobs with a
heartbeat more than ``--late`` seconds after the stop returned (a stopped job's worker is
ended within that time). ``--method cancel`` replaces the executor's stop with what it did
before (``ray.cancel(ref, force=True)`` on every task in flight), for comparison.

``--mode crossing`` aims at the race itself: each try is a driver on a Ray of its own that
stops ``--count`` tiny tasks one at a time, half of them the moment ``ray.wait`` sees the
result (when Ray's owner is still completing the task), and counts the drivers that abort and
the stopped tasks still unsettled a minute later (left running).
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

SHORT_S = (0.1, 0.12)
"""The short jobs' working time, uniform in this range (seconds): alike, so that they finish
in waves, several replies arriving together, as an audit's episodes of one task do."""

LONG_S = 3.0
"""The long jobs' working time (seconds): a long job alive at the stop would beat long after."""


def beating_job(seconds: float, heartbeat: str) -> float:
    """Work ``seconds``, writing the wall time to ``heartbeat`` every 10 ms."""
    end = time.monotonic() + seconds
    with Path(heartbeat).open("a") as beats:
        while time.monotonic() < end:
            beats.write(f"{time.time():.4f}\n")
            beats.flush()
            time.sleep(0.01)
    return seconds


def _cancel_every_task(ray, gate, tasks) -> None:
    """The stop as it was before the gate: a forced cancel of every task in flight."""
    for ref in tasks.values():
        ray.cancel(ref, force=True)


_SENT: list[float] = []
"""When the child's Ctrl-C was sent (the wall time)."""


def _send(interrupt: tuple[int, int]) -> None:
    _SENT.append(time.time())
    os.kill(*interrupt)


def _later(seconds: float, interrupt: tuple[int, int]) -> None:
    """Send the signal in ``seconds`` from a thread that does not keep the process alive."""
    timer = threading.Timer(seconds, _send, (interrupt,))
    timer.daemon = True
    timer.start()


def child(address: str, folder: Path, seed: int, method: str) -> int:
    """One driver: join, run jobs, Ctrl-C itself at a random moment; 130 once stopped."""
    from llm_aai.execution import Job, ray_executor
    from llm_aai.execution.ray_executor import RayExecutor

    if method == "cancel":
        ray_executor.stop_tasks = _cancel_every_task
    rng = random.Random(seed)
    executor = RayExecutor(4, address, in_flight=2)
    jobs = (Job(n, beating_job, (LONG_S if n % 4 == 0 else rng.uniform(*SHORT_S),
                                 str(folder / f"job-{n}")))
            for n in range(100_000))
    stop_after = rng.randint(1, 30)  # results, then Ctrl-C within 50 ms: replies cross it
    interrupt = (os.getpid(), signal.SIGINT)
    _later(120.0, interrupt)  # in case no result comes
    finished = 0
    try:
        for _ in executor.run(jobs):
            finished += 1
            if finished == stop_after:
                _later(rng.uniform(0.0, 0.05), interrupt)
    except KeyboardInterrupt:
        sent = _SENT[0] if _SENT else time.time()
        (folder / "stopped").write_text(f"{time.time():.4f}\n{finished}\n{sent:.4f}\n")
        executor.close()
        return 130
    return 1


def tiny_job(n: int) -> int:
    """A job that returns at once: its reply is what a stop crosses."""
    return n


def crossing(folder: Path, seed: int, method: str, count: int) -> int:
    """One driver that stops ``count`` single tiny tasks one by one: half of them the moment
    ``ray.wait`` sees the result (the owner is then still completing the task: the window of
    Ray's race), the others at a random moment up to ``CROSS_S`` after submitting it (most are
    then queued or running). A stop by the gate leaves a task given leave alone and cancels
    one refused; ``cancel`` cancels it whatever its state, as the executor did before. Every
    stopped task must then be settled (its result or its cancellation) within 60 s: one still
    waiting then was left running."""
    import ray

    from llm_aai.execution.ray_stop import gated_call, start_gate, stop_tasks

    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    rng = random.Random(seed)
    gate = start_gate(ray)
    remote = ray.remote(num_cpus=1, max_retries=2)(gated_call)
    ray.get(remote.remote(gate, "warm-up", tiny_job, (0,)))
    left_running, cancelled = 0, 0
    for n in range(count):
        token = f"task-{n}"
        ref = remote.remote(gate, token, tiny_job, (n,))
        if rng.random() < 0.5:  # the worst moment: as its result lands
            while not ray.wait([ref], timeout=0)[0]:
                pass
        else:  # any moment of its short life
            time.sleep(rng.uniform(0.0, CROSS_S))
        if method == "cancel":
            ray.cancel(ref, force=True)
        else:
            stop_tasks(ray, gate, {token: ref})
        if not ray.wait([ref], timeout=60)[0]:
            left_running += 1
            continue
        try:
            ray.get(ref)
        except ray.exceptions.RayError:  # cancelled (its worker ended with it)
            cancelled += 1
    (folder / "crossing").write_text(f"{count} {cancelled} {left_running}\n")
    ray.shutdown()
    return 0


CROSS_S = 0.05
"""The window in which a crossing stop falls after its task was submitted (seconds)."""


def _last_beats(folder: Path) -> dict[str, float]:
    beats = {}
    for path in folder.glob("job-*"):
        lines = path.read_text().split()
        if lines:
            beats[path.name] = float(lines[-1])
    return beats


def main(argv: list[str] | None = None) -> int:
    """Run the tries and print the counts."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tries", type=int, default=40)
    parser.add_argument("--method", choices=("gate", "cancel"), default="gate")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--late", type=float, default=1.0,
                        help="seconds after the stop past which a heartbeat counts as running on")
    parser.add_argument("--mode", choices=("stops", "crossing"), default="stops",
                        help="stops: drivers Ctrl-C'ed amid job streams (the default); "
                             "crossing: each driver stops --count tiny tasks one by one")
    parser.add_argument("--count", type=int, default=200,
                        help="tiny tasks each crossing driver stops")
    parser.add_argument("--child", nargs=3, metavar=("ADDRESS", "FOLDER", "SEED"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        address, folder, seed = args.child
        if args.mode == "crossing":
            return crossing(Path(folder), int(seed), args.method, args.count)
        return child(address, Path(folder), int(seed), args.method)
    if args.mode == "crossing":
        return _crossing_tries(args)

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    from ray.cluster_utils import Cluster

    node = {"num_cpus": 2, "object_store_memory": 100 * 1024 * 1024}
    cluster = Cluster(initialize_head=True, head_node_args={**node, "include_dashboard": False})
    cluster.add_node(**node)
    cluster.wait_for_nodes()
    aborts, continued_tries, continued_tasks, exits, lags, finished = 0, 0, 0, {}, [], []
    stop_times: list[float] = []
    try:
        with tempfile.TemporaryDirectory(prefix="stress-ray-stop-") as scratch:
            for attempt in range(args.tries):
                folder = Path(scratch) / f"try-{attempt}"
                folder.mkdir()
                command = [sys.executable, "-m", "benchmarks.stress_ray_stop", "--method",
                           args.method, "--child", cluster.address, str(folder),
                           str(args.seed * 100_000 + attempt)]
                try:
                    done = subprocess.run(command, capture_output=True, text=True,
                                          timeout=180)
                    code, stderr = done.returncode, done.stderr
                except subprocess.TimeoutExpired as expired:
                    code, stderr = "timeout", str(expired.stderr or "")
                exits[code] = exits.get(code, 0) + 1
                note = ""
                if code != 130:
                    aborts += 1
                    if "not pending" in stderr:
                        note = " (Tried to complete task that was not pending)"
                    tail = stderr.strip().splitlines()[-3:] if stderr else []
                    note += "".join(f"\n    {line[:160]}" for line in tail)
                time.sleep(args.late + 1.0)  # any job left running beats on meanwhile
                late = []
                stopped_file = folder / "stopped"
                if stopped_file.exists():
                    stopped_at, count, sent = stopped_file.read_text().split()
                    finished.append(int(count))
                    stop_times.append(float(stopped_at) - float(sent))
                    beats = _last_beats(folder)
                    lag = max(beats.values(), default=float(stopped_at)) - float(stopped_at)
                    lags.append(lag)
                    late = [name for name, last in beats.items()
                            if last > float(stopped_at) + args.late]
                if late:
                    continued_tries += 1
                    continued_tasks += len(late)
                print(f"try {attempt + 1}: exit {code}, {len(late)} job(s) ran on after the "
                      f"stop{note}", flush=True)
    finally:
        cluster.shutdown()
    print(f"\nmethod {args.method}: {args.tries} tries, exits {exits}")
    print(f"driver aborts: {aborts}")
    print(f"tries with a job running on more than {args.late} s after the stop: "
          f"{continued_tries} ({continued_tasks} jobs)")
    if lags:
        print(f"last heartbeat after the stop returned: max {max(lags):.3f} s; "
              f"jobs finished before the stop: median {sorted(finished)[len(finished) // 2]}")
        stop_times.sort()
        print(f"from Ctrl-C to the stop's end (the tasks ended): median "
              f"{stop_times[len(stop_times) // 2]:.2f} s, max {stop_times[-1]:.2f} s")
    return 0 if aborts == 0 and continued_tries == 0 else 1


def _crossing_tries(args: argparse.Namespace) -> int:
    """Run ``--tries`` crossing drivers, each on a Ray of its own, and print the counts."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    aborts, stops, cancelled, left_running = 0, 0, 0, 0
    with tempfile.TemporaryDirectory(prefix="stress-ray-crossing-") as scratch:
        for attempt in range(args.tries):
            folder = Path(scratch) / f"try-{attempt}"
            folder.mkdir()
            command = [sys.executable, "-m", "benchmarks.stress_ray_stop", "--mode", "crossing",
                       "--method", args.method, "--count", str(args.count), "--child", "local",
                       str(folder), str(args.seed * 100_000 + attempt)]
            try:
                done = subprocess.run(command, capture_output=True, text=True, timeout=900)
                code, stderr = done.returncode, done.stderr
            except subprocess.TimeoutExpired as expired:
                code, stderr = "timeout", str(expired.stderr or "")
            tally = folder / "crossing"
            note = ""
            if code != 0 or not tally.exists():
                aborts += 1
                if "not pending" in stderr:
                    note = " (Tried to complete task that was not pending)"
            else:
                count, stopped, stuck = map(int, tally.read_text().split())
                stops, cancelled, left_running = (stops + count, cancelled + stopped,
                                                  left_running + stuck)
            print(f"try {attempt + 1}: exit {code}{note}", flush=True)
    print(f"\nmethod {args.method}, crossing: {args.tries} drivers of {args.count} stops each")
    print(f"driver aborts: {aborts}")
    print(f"stops in the drivers that finished: {stops}, of which cancelled {cancelled}, "
          f"the rest given leave; tasks left running: {left_running}")
    return 0 if aborts == 0 and left_running == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
