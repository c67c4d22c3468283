"""Resume mid-episode in every mode: the resumed run's results and logs are the uninterrupted run's.

The runner's rule: an interrupted episode is left unfinished and played again from its start
on resume (a finished one is kept). So a run interrupted in the middle of an episode and
resumed must end with the same results, turn logs and frame files as a run never interrupted,
and must send the model the same requests from that episode on. The interruption is a real
signal: SIGINT in this process (as Ctrl-C), sent by the fake model while it answers a chosen
request; across tasks also SIGTERM to a ``python -m llm_aai.run`` subprocess.
"""

from __future__ import annotations

import itertools
import os
import signal
from dataclasses import replace

import pytest

from llm_aai.llm.fake_server import FakeChatServer
from llm_aai.logs import RunStore, read_turns
from llm_aai.protocol import EpisodeProtocol
from llm_aai.protocol.modes import ModeSettings
from llm_aai.runner import ModelOptions, RunConfig, RunInterrupted, resume_run, start_run
from tests.helpers.modes import by_user_count, by_user_count_action, request_sequence, run_record
from tests.helpers.runs import keyless_env, run_module
from tests.helpers.signals import has_lines, start_module, stop, wait_until

MODES = {
    "action control": ({"modes": ModeSettings(control="action"),
                       "protocol": EpisodeProtocol(max_scripts=None, max_replies=6)},
                      by_user_count_action, "01-04-03", 3),
    "observe every": ({"modes": ModeSettings(observe_every=4),
                       "protocol": EpisodeProtocol(max_scripts=4)}, by_user_count, "01-04-03", 3),
    "filmstrip": ({"modes": ModeSettings(observe_every=4, filmstrip=True),
                   "protocol": EpisodeProtocol(max_scripts=4)}, by_user_count, "01-04-03", 3),
    "no script cap": ({"protocol": EpisodeProtocol(max_scripts=None, max_replies=5)},
                      by_user_count, "01-04-03", 3),
    "across tasks": ({"modes": ModeSettings(context="across-tasks"),
                      "protocol": EpisodeProtocol(max_scripts=3)},
                     by_user_count, "01-04-03,01-06-02", 5),
}
"""mode -> (its settings, the model's replies, the tasks, the request the signal comes with)."""


def interrupting(responder, at: int):
    """``responder``, sending this process SIGINT (Ctrl-C) while it answers request ``at``."""
    count = itertools.count(1)

    def respond(body):
        if next(count) == at:
            os.kill(os.getpid(), signal.SIGINT)
        return responder(body)

    return respond


def config_for(settings, tasks, testbed_dir, url) -> RunConfig:
    return replace(RunConfig(model="openai/fake", tasks=tasks, arenas_dir=testbed_dir,
                             resolution=64,
                             model_options=ModelOptions(api_base=url, max_retries=0)),
                   **settings)


@pytest.mark.parametrize("mode", sorted(MODES))
def test_a_run_interrupted_mid_episode_resumes_to_the_uninterrupted_run(
        mode, testbed_dir, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    settings, responder, tasks, at = MODES[mode]
    with FakeChatServer(responder=responder) as server:
        whole = start_run(config_for(settings, tasks, testbed_dir, server.url),
                          out=tmp_path, run_id="whole", show_progress=False).run_dir
        uninterrupted = request_sequence([r.body for r in server.requests])
    with FakeChatServer(responder=interrupting(responder, at)) as server:
        with pytest.raises(RunInterrupted):
            start_run(config_for(settings, tasks, testbed_dir, server.url),
                      out=tmp_path, run_id="cut", show_progress=False)
        cut = tmp_path / "cut"
        before = len(server.requests)
        sealed = RunStore(cut).finished_results()
        unfinished = [d for d in (cut / "episodes").iterdir() if d.name not in sealed]
        assert len(unfinished) == 1  # stopped mid-episode: turns logged, no result
        assert len([t for t in read_turns(unfinished[0]) if t.reply is not None]) >= 1
        resume_run(cut, show_progress=False)
        resumed = request_sequence([r.body for r in server.requests[before:]])
    # the stopped attempt had called the model: kept beside its replay, which is attempt 2
    stopped = unfinished[0].name
    assert read_turns(cut / "episodes" / f"{stopped}.attempt-1")
    replayed = run_record(cut)
    assert replayed[stopped]["result"]["attempts"] == 2
    replayed[stopped]["result"]["attempts"] = 1
    assert replayed == run_record(whole)
    # the unfinished episode is played again from its start, sending what it sent before
    replayed_from = sum(result.scripts_used for result in sealed.values())
    assert resumed == uninterrupted[replayed_from:]
    if mode == "across tasks":
        assert set(sealed) == {"01-04-03_t1"} and replayed_from == 3


@pytest.mark.slow
def test_sigterm_mid_conversation_then_resume_sends_the_uninterrupted_requests(
        testbed_dir, tmp_path):
    env = keyless_env()
    tasks = "01-04-03,01-06-02,02-02-01"

    def args(url, run_id):
        return ["--model", "openai/fake", "--api-base", url, "--tasks", tasks,
                "--arenas-dir", testbed_dir, "--out", tmp_path, "--run-id", run_id,
                "--resolution", 64, "--max-scripts", 3, "--context", "across-tasks",
                "--max-retries", 0, "--no-progress"]

    def run(*flags):
        return run_module("llm_aai.run", *flags, env=env, timeout=300)

    with FakeChatServer(responder=by_user_count) as server:
        finished = run(*args(server.url, "whole"))
        assert finished.returncode == 0, finished.stderr
        uninterrupted = request_sequence([r.body for r in server.requests])
    assert len(uninterrupted) == 9
    with FakeChatServer(responder=by_user_count, latency_s=0.3) as server:
        process = start_module("llm_aai.run", *args(server.url, "cut"), env=env)
        second = tmp_path / "cut" / "episodes" / "01-06-02_t1" / "turns.jsonl"
        wait_until(has_lines(second, 2), process, timeout=180, poll=0.05)
        _, stderr = stop(process, signal.SIGTERM, timeout=60)
        assert process.returncode == 143, stderr
        assert set(RunStore(tmp_path / "cut").finished_results()) == {"01-04-03_t1"}
        before = len(server.requests)
        assert request_sequence([r.body for r in server.requests]) == uninterrupted[:before]
        resumed = run("--resume", tmp_path / "cut", "--api-base", server.url, "--no-progress")
        assert resumed.returncode == 0, resumed.stderr
        after = request_sequence([r.body for r in server.requests[before:]])
    # task 2 is played again from its start, with task 1's history rebuilt from its log
    assert after == uninterrupted[3:]
    # its stopped attempt had called the model: kept beside the replay, which is attempt 2
    assert read_turns(tmp_path / "cut" / "episodes" / "01-06-02_t1.attempt-1")
    replayed = run_record(tmp_path / "cut")
    assert replayed["01-06-02_t1"]["result"]["attempts"] == 2
    replayed["01-06-02_t1"]["result"]["attempts"] = 1
    assert replayed == run_record(tmp_path / "whole")
