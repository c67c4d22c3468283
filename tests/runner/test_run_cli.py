"""``python -m llm_aai.run`` end to end: real subprocess, real litellm HTTP, local fake server."""

from __future__ import annotations

import base64
import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from llm_aai.llm.fake_server import FakeChatServer, HTTPError, ServerError
from llm_aai.logs import RunStore, read_turns
from llm_aai.settings import read_settings
from tests.helpers.runs import keyless_env, run_module
from tests.helpers.signals import has_lines, start_module, stop, wait_until

SENTINEL_KEY = "sk-test-SENTINEL-0123456789abcdef"


def run_cli(args, *, env_extra=None, timeout=240, **popen):
    env = keyless_env()
    env.update(env_extra or {})
    return run_module("llm_aai.run", *args, env=env, timeout=timeout, **popen)


def base_args(testbed_dir, out, url, tasks="01-04-03"):
    return ["--model", "openai/fake", "--api-base", url, "--tasks", tasks,
            "--arenas-dir", testbed_dir, "--out", out, "--run-id", "r", "--resolution", 64,
            "--max-scripts", 2, "--no-progress"]


def all_text(directory: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in directory.rglob("*")
                     if p.is_file() and p.suffix in {".json", ".jsonl", ".csv"})


def test_llm_run_sends_history_and_images_and_logs_everything(testbed_dir, tmp_path):
    with FakeChatServer(default='Think("ahead");Go(3);') as server:
        result = run_cli(base_args(testbed_dir, tmp_path, server.url),
                         env_extra={"OPENAI_API_KEY": SENTINEL_KEY})
        requests = [r.body for r in server.requests]
    assert result.returncode == 0, result.stderr
    run_dir = tmp_path / "r"
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["prompt"]["name"] == "react" and len(manifest["prompt"]["sha256"]) == 64
    assert read_settings(run_dir).tasks == ("01-04-03",)
    assert manifest["arenas"]["01-04-03"]

    assert len(requests) == 2
    first, second = requests
    assert first["messages"][0]["role"] == "system"
    images = [p for p in first["messages"][1]["content"] if p["type"] == "image_url"]
    assert len(images) == 3
    # the frames go out as the JPEG files the log keeps, byte for byte
    episode = run_dir / "episodes" / "01-04-03_t1"
    sent = [base64.b64decode(p["image_url"]["url"].removeprefix("data:image/jpeg;base64,"))
            for p in images]
    start, *turns = read_turns(episode)
    assert start.turn == 0 and start.sent_images == ()  # the steps before the first script
    logged = [(episode / name).read_bytes() for name in turns[0].sent_images]
    assert sent == logged and all(name.endswith(".jpg") for name in turns[0].sent_images)
    # the whole history goes with every call
    assert [m["role"] for m in second["messages"]] == ["system", "user", "assistant", "user"]
    assert second["messages"][2]["content"] == 'Think("ahead");Go(3);'
    assert first["temperature"] == 0

    assert [t.reply for t in turns[:2]] == ['Think("ahead");Go(3);'] * 2
    assert turns[0].usage.input_tokens > 0
    summary = (run_dir / "summary.csv").read_text().splitlines()
    assert len(summary) == 2 and ",01-04-03,1,1," in summary[1]
    # the key went over the wire, and nowhere else
    assert SENTINEL_KEY not in all_text(run_dir)
    assert SENTINEL_KEY not in result.stdout + result.stderr


def test_png_frames_on_request(testbed_dir, tmp_path):
    with FakeChatServer(default="Go(1);") as server:
        result = run_cli(base_args(testbed_dir, tmp_path, server.url) + ["--frames", "png"])
        url = server.requests[0].body["messages"][1]["content"][1]["image_url"]["url"]
    assert result.returncode == 0, result.stderr
    assert url.startswith("data:image/png;base64,")
    turns = read_turns(tmp_path / "r" / "episodes" / "01-04-03_t1")
    assert all(name.endswith(".png") for turn in turns for name in turn.sent_images)
    assert read_settings(tmp_path / "r").config.frames.kind == "png"


def test_infrastructure_failure_is_relaunched(testbed_dir, tmp_path):
    with FakeChatServer([ServerError(500)], default="Go(3);") as server:
        result = run_cli(base_args(testbed_dir, tmp_path, server.url) + [
            "--max-retries", 0, "--relaunch-delay", 0])
    assert result.returncode == 0, result.stderr
    episodes = tmp_path / "r" / "episodes"
    finished = RunStore(tmp_path / "r").finished_results()["01-04-03_t1"]
    assert finished.attempts == 2 and finished.end_reason != "infrastructure"
    assert (episodes / "01-04-03_t1.attempt-1").is_dir()


def test_trial_still_failing_after_relaunches_is_recorded_as_infrastructure(testbed_dir, tmp_path):
    with FakeChatServer(default=None, responder=lambda body: ServerError(503)) as server:
        result = run_cli(base_args(testbed_dir, tmp_path, server.url) + [
            "--max-retries", 0, "--relaunch-delay", 0, "--max-relaunches", 1])
    assert result.returncode == 1
    assert "1 of 1 episodes ended on infrastructure errors" in result.stderr
    assert f"--resume {tmp_path / 'r'}" in result.stderr
    finished = RunStore(tmp_path / "r").finished_results()["01-04-03_t1"]
    assert finished.end_reason == "infrastructure" and not finished.passed
    assert finished.attempts == 2

    # after the outage, resuming retries it and keeps every failed attempt's log
    with FakeChatServer(default="Go(3);") as server:
        resumed = run_cli(["--resume", tmp_path / "r", "--api-base", server.url])
    assert resumed.returncode == 0, resumed.stderr
    finished = RunStore(tmp_path / "r").finished_results()["01-04-03_t1"]
    assert finished.end_reason != "infrastructure" and finished.attempts == 3
    episodes = tmp_path / "r" / "episodes"
    assert sorted(p.name for p in episodes.iterdir()) == [
        "01-04-03_t1", "01-04-03_t1.attempt-1", "01-04-03_t1.attempt-2"]


def test_a_model_server_that_stays_down_stops_the_run(testbed_dir, tmp_path):
    with FakeChatServer(default=None, responder=lambda body: ServerError(503)) as server:
        result = run_cli(base_args(testbed_dir, tmp_path, server.url,
                                   "01-04-03,01-06-02,02-02-01,02-10-01") + [
            "--max-retries", 0, "--relaunch-delay", 0, "--max-relaunches", 0,
            "--stop-after-failures", 2])
    assert result.returncode == 1
    assert "stopped: the last 2 episodes were lost to infrastructure errors" in result.stderr
    assert "ServiceUnavailableError" in result.stderr
    assert "2 episodes were not started" in result.stderr
    assert sorted(RunStore(tmp_path / "r").finished_results()) == ["01-04-03_t1", "01-06-02_t1"]


def test_a_refused_request_stops_the_run_with_a_message_and_resume_finishes_it(testbed_dir,
                                                                             tmp_path):
    refusal = HTTPError(401, f"Incorrect API key provided: {SENTINEL_KEY}")
    with FakeChatServer([refusal], default="Go(3);") as server:
        result = run_cli(base_args(testbed_dir, tmp_path, server.url),
                         env_extra={"OPENAI_API_KEY": SENTINEL_KEY})
    assert result.returncode == 2
    assert "the model refused a request, so the run stopped" in result.stderr
    assert f"--resume {tmp_path / 'r'}" in result.stderr
    assert "Traceback" not in result.stderr and "Provider List" not in result.stdout
    assert SENTINEL_KEY not in result.stdout + result.stderr
    assert not RunStore(tmp_path / "r").finished_results()

    with FakeChatServer(default="Go(3);") as server:
        resumed = run_cli(["--resume", tmp_path / "r", "--api-base", server.url,
                           "--no-progress"], env_extra={"OPENAI_API_KEY": SENTINEL_KEY})
    assert resumed.returncode == 0, resumed.stderr
    assert set(RunStore(tmp_path / "r").finished_results()) == {"01-04-03_t1"}


def test_resume_keeps_the_arenas_folder_and_refuses_changed_settings(testbed_dir, tmp_path):
    arenas = tmp_path / "arenas"
    arenas.mkdir()
    for task in ("01-04-03", "01-06-02"):
        (arenas / f"{task}.yaml").write_bytes((testbed_dir / f"{task}.yaml").read_bytes())
    args = ["--model", "heuristic", "--tasks", "01-04-03,01-06-02", "--arenas-dir", "arenas",
            "--out", "out", "--run-id", "r", "--resolution", 64, "--max-scripts", 2,
            "--no-progress"]
    first = run_cli(args, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    run_dir = tmp_path / "out" / "r"
    assert read_settings(run_dir).config.arenas_dir == arenas  # absolute, usable from anywhere
    shutil.rmtree(run_dir / "episodes" / "01-06-02_t1")

    refused = run_cli(["--resume", run_dir, "--model", "random", "--trials", 3])
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "--model random (the run has heuristic)" in refused.stderr
    assert "--trials 3 (the run has 1)" in refused.stderr

    (arenas / "01-06-02.yaml").write_text(
        (arenas / "01-06-02.yaml").read_text().replace("t: ", "t: 1", 1))
    changed = run_cli(["--resume", run_dir])
    assert changed.returncode == 2 and "01-06-02" in changed.stderr
    assert "differ from those" in changed.stderr
    assert not (run_dir / "episodes" / "01-06-02_t1").exists()

    (arenas / "01-06-02.yaml").write_bytes((testbed_dir / "01-06-02.yaml").read_bytes())
    resumed = run_cli(["--resume", run_dir])  # from another directory, no --arenas-dir
    assert resumed.returncode == 0, resumed.stderr
    assert set(RunStore(run_dir).finished_results()) == {"01-04-03_t1", "01-06-02_t1"}
    # the run's two episodes, as its table counts them (was '1 episodes, ...': this sitting's)
    passed = sum(r.passed for r in RunStore(run_dir).finished_results().values())
    assert (f"2 episodes, {passed} passed; results in {run_dir} (1 played in this sitting)"
            in resumed.stdout)

    again = run_cli(["--resume", run_dir])  # a finished run says so and shows its table
    assert again.returncode == 0, again.stderr
    assert f"nothing left to run: all 2 episodes of {run_dir} are finished" in again.stdout
    assert "Children 6-10" in again.stdout


def test_resume_refuses_a_prompt_changed_since_the_run_started(testbed_dir, tmp_path):
    prompt = tmp_path / "my_prompt.md"
    prompt.write_text((Path(__file__).parents[2] / "llm_aai/prompts/react_system.md").read_text())
    args = ["--model", "heuristic", "--prompt", prompt, "--tasks", "01-04-03,01-06-02",
            "--arenas-dir", testbed_dir, "--out", tmp_path, "--run-id", "r", "--resolution", 64,
            "--max-scripts", 1, "--no-progress"]
    assert run_cli(args).returncode == 0
    run_dir = tmp_path / "r"
    shutil.rmtree(run_dir / "episodes" / "01-06-02_t1")
    prompt.write_text(prompt.read_text() + "\nAlways turn left first.\n")
    refused = run_cli(["--resume", run_dir])
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "the system prompt of prompt" in refused.stderr and "differ from what" in refused.stderr
    assert not (run_dir / "episodes" / "01-06-02_t1").exists()


def test_a_resumed_run_over_its_budget_says_so_and_not_that_it_is_finished(testbed_dir,
                                                                           tmp_path):
    args = ["--model", "heuristic", "--tasks", "01-04-03,01-06-02", "--arenas-dir", testbed_dir,
            "--out", tmp_path, "--run-id", "r", "--resolution", 64, "--max-scripts", 1,
            "--budget-usd", "0.5", "--no-progress"]
    assert run_cli(args).returncode == 0
    run_dir = tmp_path / "r"
    result = run_dir / "episodes" / "01-04-03_t1" / "result.json"
    result.write_text(result.read_text().replace('"cost_usd": 0.0', '"cost_usd": 1.0'))
    shutil.rmtree(run_dir / "episodes" / "01-06-02_t1")
    resumed = run_cli(["--resume", run_dir])
    assert resumed.returncode == 0, resumed.stderr
    assert "budget reached: the run has cost $1.00 of $0.50; 1 episodes were not started" in (
        resumed.stderr)
    assert "nothing left to run" not in resumed.stdout
    assert (f"1 episodes, 0 passed; results in {run_dir} (1 of 2 finished, 0 played in this "
            "sitting)") in resumed.stdout
    raised = run_cli(["--resume", run_dir, "--budget-usd", "2"])
    assert raised.returncode == 0, raised.stderr
    assert set(RunStore(run_dir).finished_results()) == {"01-04-03_t1", "01-06-02_t1"}


def test_a_run_is_written_by_one_process_at_a_time(testbed_dir, tmp_path):
    args = ["--model", "heuristic", "--tasks", "01-04-03", "--arenas-dir", testbed_dir,
            "--out", tmp_path, "--run-id", "r", "--resolution", 64, "--max-scripts", 1,
            "--no-progress"]
    assert run_cli(args).returncode == 0
    run_dir = tmp_path / "r"
    shutil.rmtree(run_dir / "episodes" / "01-04-03_t1")
    with RunStore(run_dir).lock():  # another process is resuming it
        refused = run_cli(["--resume", run_dir])
    assert refused.returncode == 2 and "another process is running" in refused.stderr
    assert not (run_dir / "episodes" / "01-04-03_t1").exists()
    assert run_cli(["--resume", run_dir]).returncode == 0  # the lock went with its holder


def test_ctrl_c_stops_episodes_in_flight_and_resume_finishes_them(testbed_dir, tmp_path):
    tasks = "01-04-03,01-06-02,02-02-01"
    with FakeChatServer(default="Turn(30);", latency_s=0.5) as server:
        args = base_args(testbed_dir, tmp_path, server.url, tasks) + ["--max-scripts", 30,
                                                                      "--concurrency", 2]
        process = start_module("llm_aai.run", *args, env=keyless_env())
        wait_until(has_lines(tmp_path / "r" / "episodes" / "01-06-02_t1" / "turns.jsonl", 2),
                   process)
        asked_before = len(server.requests)
        _, stderr = stop(process, signal.SIGINT)
        # at most the reply each of the 2 episodes in flight was waiting for (and one racing
        # the signal), not the rest of two 30-script episodes: counted, not timed, so a busy
        # machine cannot fail it
        assert len(server.requests) - asked_before <= 4
        assert process.returncode == 130, stderr
        assert f"continue with --resume {tmp_path / 'r'}" in stderr and "Traceback" not in stderr
        store = RunStore(tmp_path / "r")
        sealed = set(store.finished_results())
        assert len(sealed) < 3
        rows = (tmp_path / "r" / "summary.csv").read_text().splitlines()[1:]
        assert sorted(row.split(",")[0] for row in rows) == sorted(sealed)
        resumed = run_cli(["--resume", tmp_path / "r", "--api-base", server.url])
    assert resumed.returncode == 0, resumed.stderr
    assert set(store.finished_results()) == {"01-04-03_t1", "01-06-02_t1", "02-02-01_t1"}


def test_a_misread_arena_stops_the_run_before_it_starts(testbed_dir, tmp_path):
    arenas = tmp_path / "arenas"
    arenas.mkdir()
    text = (testbed_dir / "01-04-03.yaml").read_text()
    assert "name: GoodGoal\n" in text
    (arenas / "01-04-03.yaml").write_text(text.replace("name: GoodGoal\n", "name: GoodGoalz\n"))
    result = run_cli(["--model", "heuristic", "--tasks", "01-04-03", "--arenas-dir", arenas,
                      "--out", tmp_path / "out", "--no-progress"])
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "01-04-03.yaml" in result.stderr and "GoodGoalz" in result.stderr
    assert not (tmp_path / "out").exists()


def test_runs_started_in_the_same_second_get_their_own_directories(testbed_dir, tmp_path):
    from llm_aai.cli.run import default_run_id

    taken = tmp_path / default_run_id("heuristic")
    taken.mkdir()
    (taken / "manifest.json").write_text("{}")
    args = ["--model", "heuristic", "--tasks", "01-04-03", "--arenas-dir", testbed_dir,
            "--out", tmp_path, "--resolution", 64, "--max-scripts", 1, "--no-progress"]
    result = run_cli(args)
    assert result.returncode == 0, result.stderr
    runs = sorted(p.name for p in tmp_path.iterdir())
    assert len(runs) == 2 and (runs[0] == taken.name or runs[1].endswith("-2")), runs


def test_resume_after_kill_finishes_without_duplicates(testbed_dir, tmp_path):
    tasks = "01-04-03,01-06-02,02-02-01"
    with FakeChatServer(default="Turn(30);", latency_s=0.4) as server:
        args = base_args(testbed_dir, tmp_path, server.url, tasks) + ["--max-scripts", 4]
        process = subprocess.Popen([sys.executable, "-m", "llm_aai.run", *map(str, args)],
                                   env=keyless_env(), stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
        store = RunStore(tmp_path / "r")
        deadline = time.monotonic() + 120
        while not store.finished_results() and time.monotonic() < deadline:
            time.sleep(0.1)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
        done_before = set(store.finished_results())
        assert 1 <= len(done_before) < 3
        resumed = run_cli(["--resume", tmp_path / "r", "--api-base", server.url, "--no-progress",
                           "--arenas-dir", testbed_dir])
    assert resumed.returncode == 0, resumed.stderr
    results = store.finished_results()
    assert set(results) == {"01-04-03_t1", "01-06-02_t1", "02-02-01_t1"}
    for episode_id in results:
        turns = [t.turn for t in read_turns(store.episodes_dir / episode_id)]
        assert turns == sorted(set(turns))
    assert len((tmp_path / "r" / "summary.csv").read_text().splitlines()) == 4


def test_missing_api_key_stops_before_anything_starts(testbed_dir, tmp_path):
    result = run_cli(["--model", "claude", "--tasks", "01-04-03", "--arenas-dir", testbed_dir,
                      "--out", tmp_path, "--no-progress"])
    assert result.returncode == 2
    assert "ANTHROPIC_API_KEY" in result.stderr
    assert "Traceback" not in result.stderr
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("args, message", [
    (["--level", "11"], "level"),
    (["--tasks", "99-99-99"], "99-99-99"),
    (["--level", ""], "--level is empty"),
    (["--trials", "0"], "--trials: 0 is out of range: must be at least 1"),
    (["--concurrency", "0"], "--concurrency: 0 is out of range"),
    (["--resolution", "7"], "--resolution must be at least 64 and at most 1024, not 7"),
    (["--budget-usd", "-1"], "--budget-usd: -1 must be greater than 0"),
    (["--initial-observations", "0"], "--initial-observations: 0 is out of range"),
    (["--model", "replay"], "--model replay needs --replay-from"),
    (["--model", "nonesuch/foo"], "litellm knows no provider 'nonesuch'"),
    (["--model", "heurstic"], "did you mean 'heuristic'?"),
    (["--model", "foo"],
     "built-in agents: heuristic, oracle, oracle-frames, random, human, replay"),
    (["--backend", "unity", "--unity-build", "nowhere/AAI.x86_64"], "no Animal-AI Unity build"),
    (["--unity-build", "nowhere/AAI.x86_64"], "--unity-build needs --backend unity"),
    (["--prompt", "nonesuch"],
     "error: unknown prompt 'nonesuch'; registered: icl, plan, react, react-frame"),
])
def test_bad_task_selection_is_a_clear_error(testbed_dir, tmp_path, args, message):
    result = run_cli(["--model", "heuristic", "--arenas-dir", testbed_dir, "--out", tmp_path,
                      *args])
    assert result.returncode == 2 and message in result.stderr
    assert "Traceback" not in result.stderr
    assert not any(tmp_path.iterdir())  # no half-made run directory


def test_icl_run_sends_the_worked_example_before_the_episode(testbed_dir, tmp_path):
    with FakeChatServer(default="Go(3);") as server:
        result = run_cli(base_args(testbed_dir, tmp_path, server.url) + [
            "--prompt", "icl", "--max-scripts", 1])
        first = server.requests[0].body
    assert result.returncode == 0, result.stderr
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert manifest["prompt"]["name"] == "icl"
    assert len(manifest["prompt"]["example"]["sha256"]) == 64
    roles = [m["role"] for m in first["messages"]]
    # system, then demonstration exchanges (user/assistant pairs), then the episode's first turn
    assert roles[0] == "system" and roles[-1] == "user" and roles.count("assistant") >= 5
    demo_replies = [m["content"] for m in first["messages"] if m["role"] == "assistant"]
    assert all("Think(" in reply or "Go(" in reply or "Turn(" in reply for reply in demo_replies)
    last_images = [p for p in first["messages"][-1]["content"] if p["type"] == "image_url"]
    assert len(last_images) == 3


def test_the_manifest_records_the_options_the_agent_was_built_with(testbed_dir, tmp_path):
    with FakeChatServer(default="Go(1);") as server:
        result = run_cli(base_args(testbed_dir, tmp_path, server.url) + [
            "--max-scripts", 1, "--temperature", 0.5])
        url = server.url
    assert result.returncode == 0, result.stderr
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    options = manifest["agent"]["options"]  # it was {} for every run
    assert options["api_base"] == url and options["temperature"] == 0.5
    assert options["max_retries"] == 6 and options["max_tokens"] == 1024
