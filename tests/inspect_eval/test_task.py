"""The Inspect task end to end: mockllm and real HTTP, our logs beside Inspect's, a golden run."""

from __future__ import annotations

import csv
import dataclasses
import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from filelock import FileLock, Timeout
from inspect_ai import eval as inspect_eval
from inspect_ai.hooks import RunEnd
from inspect_ai.model import ContentImage, GenerateConfig, ModelOutput, get_model

from llm_aai.inspect_eval import task as task_module
from llm_aai.inspect_eval.task import _LAZY_RUNS, _LazyRun, _ReleaseRuns
from llm_aai.inspect_eval.task import testbed as make_testbed
from llm_aai.llm.fake_server import FakeChatServer
from llm_aai.logs.schema import CONTEXT_OVERFLOW
from llm_aai.logs.store import RunStore, read_manifest, read_result, read_turns
from llm_aai.protocol import PAPER_PROTOCOL
from llm_aai.runner import ModelOptions, RunConfig, RunError, start_run
from llm_aai.settings import read_settings

TASK = "01-04-03"
REPLIES = ["Go(3);", "Turn(90);Go(2);", "not a script", "Turn(-45);Go(4);"]


def _eval(model, tmp_path: Path, testbed_dir: Path, **args):
    run_dir = tmp_path / "run"
    logs = inspect_eval(make_testbed(tasks=TASK, arenas_dir=str(testbed_dir), resolution=64,
                                run_dir=str(run_dir), **args),
                        model=model, log_dir=str(tmp_path / "inspect-logs"), display="none",
                        max_samples=1)  # one at a time: the replies are one queue
    assert logs[0].status == "success", logs[0].error
    return logs[0], run_dir


@pytest.mark.slow  # a subprocess or the animalai client: ~10-20 s
def test_mockllm_run_scores_logs_and_shows_images(testbed_dir, tmp_path):
    outputs = [ModelOutput.from_content("mockllm/model", r) for r in REPLIES * 2]
    log, run_dir = _eval(get_model("mockllm/model", custom_outputs=outputs), tmp_path,
                         testbed_dir, max_scripts=4, trials=2)
    assert len(log.samples) == 2 and {s.epoch for s in log.samples} == {1, 2}
    for sample in log.samples:
        logged = sample.metadata["llm_aai"]
        result = read_result(run_dir / "episodes" / logged["episode_id"])
        score = sample.scores["episode_scorer"]
        assert score.value == {"passed": float(result.passed), "reward": result.reward}
        assert result.invalid_replies == 1 and result.scripts_used == 4
        # the sample's messages are the conversation: system, then 4 x (user with image, reply)
        users = [m for m in sample.messages if m.role == "user"]
        assert len(users) == 4 and all(
            any(isinstance(c, ContentImage) for c in m.content) for m in users)
        assert [m.text for m in sample.messages if m.role == "assistant"] == REPLIES
        # the refused reply's feedback and the health line reach the model
        assert "health" in users[1].text.lower()
        turns = read_turns(run_dir / "episodes" / logged["episode_id"])
        # the reply after the refused one was sent the feedback, as the runner logged it
        assert turns[3].parse_error and turns[4].sent_preamble != turns[3].sent_preamble
        assert turns[4].sent_preamble in users[3].text
        assert all(turn.sent_text in user.text
                   for turn, user in zip(turns[1:5], users, strict=True))
    metrics = log.results.scores[0].metrics
    assert {"all_pass_rate", "all_pass_low", "all_pass_high", "level_1_pass_rate",
            "level_1_reward"} <= set(metrics)
    with open(run_dir / "summary.csv") as f:
        assert sorted(r["episode_id"] for r in csv.DictReader(f)) == [f"{TASK}_t1", f"{TASK}_t2"]
    env = {**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "egl")}
    analyzed = subprocess.run([sys.executable, "-m", "llm_aai.analyze", str(run_dir)],
                              capture_output=True, text=True, env=env, timeout=300)
    assert analyzed.returncode == 0, analyzed.stderr
    replayed = subprocess.run([sys.executable, "-m", "llm_aai.replay",
                               str(run_dir / "episodes" / f"{TASK}_t1"), "--resimulate",
                               "--arenas-dir", str(testbed_dir), "--out",
                               str(tmp_path / "replay.mp4")],
                              capture_output=True, text=True, env=env, timeout=300)
    assert replayed.returncode == 0, replayed.stderr
    assert (tmp_path / "replay.mp4").stat().st_size > 0
    viewed = subprocess.run([sys.executable, "-m", "llm_aai.view", str(run_dir), "--out",
                             str(tmp_path / "site"), "--arenas-dir", str(testbed_dir)],
                            capture_output=True, text=True, env=env, timeout=300)
    assert viewed.returncode == 0, viewed.stderr
    assert list((tmp_path / "site").rglob("*.html"))


def test_same_replies_over_http_give_the_runs_outcomes(testbed_dir, tmp_path, monkeypatch):
    """Golden: Inspect's OpenAI-compatible provider on our fake server plays as `run` does."""
    with FakeChatServer(REPLIES) as server:
        config = RunConfig(model="openai/fake", tasks=TASK, arenas_dir=testbed_dir,
                           resolution=64, seed=0,
                           protocol=dataclasses.replace(PAPER_PROTOCOL, max_scripts=4),
                           model_options=ModelOptions(api_base=server.url, max_tokens=256))
        ours = start_run(config, out=tmp_path / "ours", run_id="r", show_progress=False)
    with FakeChatServer(REPLIES) as server:
        # `--model openai-api/fake/fake-model` reads FAKE_BASE_URL and FAKE_API_KEY
        monkeypatch.setenv("FAKE_BASE_URL", server.url)
        monkeypatch.setenv("FAKE_API_KEY", "not-a-key")
        model = get_model("openai-api/fake/fake-model")
        log, run_dir = _eval(model, tmp_path, testbed_dir, max_scripts=4, seed=0)
    expected_dir = ours.run_dir / "episodes" / f"{TASK}_t1"
    got_dir = run_dir / "episodes" / f"{TASK}_t1"
    expected, got = read_result(expected_dir), read_result(got_dir)
    for field in ("seed", "reward", "passed", "final_health", "scripts_used",
                  "invalid_replies", "end_reason", "steps"):
        assert getattr(got, field) == getattr(expected, field), field
    assert [(t.steps, t.health, t.sent_text, t.reply) for t in read_turns(got_dir)] == \
        [(t.steps, t.health, t.sent_text, t.reply) for t in read_turns(expected_dir)]
    assert log.samples[0].scores["episode_scorer"].value["reward"] == expected.reward
    assert len(server.requests) == len(REPLIES)  # every reply went over HTTP


def test_epochs_beyond_the_trials_name_the_task_argument(testbed_dir, tmp_path):
    outputs = [ModelOutput.from_content("mockllm/model", "Go(1);")] * 2
    log = inspect_eval(make_testbed(tasks=TASK, arenas_dir=str(testbed_dir), resolution=64,
                                    max_scripts=1, run_dir=str(tmp_path / "run")),
                       model=get_model("mockllm/model", custom_outputs=outputs), epochs=2,
                       log_dir=str(tmp_path / "logs"), display="none", max_samples=1)[0]
    assert log.status == "error"
    assert "-T trials=N" in log.error.message


def test_task_arguments_as_inspect_s_cli_passes_them(testbed_dir):
    """``-T level=3`` arrives as an int and ``-T tasks=a,b`` as a list."""
    def ids(**args):
        task = make_testbed(arenas_dir=str(testbed_dir), **args)
        return sorted(sample.id for sample in task.dataset)

    assert ids(level=3) == ids(level="3") and len(ids(level=3)) == 4
    assert ids(level=[1, 5]) == ids(level="1,5") and len(ids(level=[1, 5])) == 8
    assert ids(tasks=["01-04-03", "01-06-02"]) == ["01-04-03", "01-06-02"]
    for name, value, says in (("seed", "abc", "seed must be an integer"),
                              ("full_testbed", "no", "full_testbed must be true or false"),
                              ("level", [1.5], "level must be text")):
        with pytest.raises(ValueError, match=says):
            make_testbed(arenas_dir=str(testbed_dir), tasks=TASK, **{name: value})


def test_action_control_counts_replies(testbed_dir, tmp_path):
    outputs = [ModelOutput.from_content("mockllm/model", "Go(1);")] * 3
    log, run_dir = _eval(get_model("mockllm/model", custom_outputs=outputs), tmp_path,
                         testbed_dir, control="action", max_replies=3)
    result = read_result(run_dir / "episodes" / f"{TASK}_t1")
    assert result.end_reason != "infrastructure" and result.scripts_used == 3


def test_a_reply_cut_at_its_token_limit_and_a_full_context_end_as_in_a_run(testbed_dir,
                                                                           tmp_path):
    """Inspect says ``max_tokens`` and ``model_length`` where litellm says ``length`` and
    raises ``ContextWindowExceededError``: the episodes end the same way."""
    outputs = [ModelOutput.from_content("mockllm/model", 'Think("the goal is',
                                        stop_reason="max_tokens"),
               ModelOutput.from_content("mockllm/model", "Go(1);"),
               ModelOutput.from_content("mockllm/model", "", stop_reason="model_length")]
    log, run_dir = _eval(get_model("mockllm/model", custom_outputs=outputs), tmp_path,
                         testbed_dir)
    episode = run_dir / "episodes" / f"{TASK}_t1"
    turns = [turn for turn in read_turns(episode) if turn.reply is not None]
    assert turns[0].finish_reason == "length"
    assert "cut off at the reply length limit" in turns[1].sent_preamble
    assert read_result(episode).end_reason == CONTEXT_OVERFLOW


def test_each_model_of_an_eval_gets_its_own_run(testbed_dir, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the default run folders go to results/ here
    task = make_testbed(tasks=TASK, arenas_dir=str(testbed_dir), resolution=64, max_scripts=1)
    models = [get_model(name, custom_outputs=[ModelOutput.from_content(name, "Go(1);")])
              for name in ("mockllm/model", "mockllm/other")]
    logs = inspect_eval(task, model=models, log_dir=str(tmp_path / "logs"), display="none")
    assert [log.status for log in logs] == ["success", "success"]
    runs = sorted((tmp_path / "results").iterdir())
    assert [read_result(run / "episodes" / f"{TASK}_t1").agent for run in runs] == [
        "mockllm/model", "mockllm/other"]


def test_a_run_dir_serves_one_model(testbed_dir, tmp_path):
    task = make_testbed(tasks=TASK, arenas_dir=str(testbed_dir), resolution=64, max_scripts=1,
                        run_dir=str(tmp_path / "run"))
    models = [get_model(name, custom_outputs=[ModelOutput.from_content(name, "Go(1);")])
              for name in ("mockllm/model", "mockllm/other")]
    logs = inspect_eval(task, model=models, log_dir=str(tmp_path / "logs"), display="none")
    assert sorted(log.status for log in logs) == ["error", "success"]
    failed = next(log for log in logs if log.status == "error")
    assert "needs its own: evaluate each model with its own -T run_dir" in failed.error.message
    result = read_result(tmp_path / "run" / "episodes" / f"{TASK}_t1")
    assert result.agent == next(log.eval.model for log in logs if log.status == "success")


@pytest.mark.parametrize(("name", "value", "says"), [
    ("prompt", "reactt", "unknown prompt 'reactt'; registered: icl, plan, react"),
    ("observation", "imag", "observation must be one of image, text, both"),
    ("perspective", "ego", "perspective must be one of egocentric, allocentric"),
    ("script_mode", "lenien", "script_mode must be one of strict, lenient"),
])
def test_a_typo_in_a_task_argument_fails_when_the_task_is_made(testbed_dir, tmp_path, name,
                                                              value, says):
    """``-T prompt=reactt`` is refused by ``inspect eval`` at once, not at its first sample."""
    with pytest.raises((ValueError, RunError), match=says):
        make_testbed(tasks=TASK, arenas_dir=str(testbed_dir), run_dir=str(tmp_path / "run"),
                     **{name: value})
    assert not (tmp_path / "run").exists()


TWO_TASKS = f"{TASK},01-06-02"


def _failing_on(call: int):
    """A mockllm model whose ``call``-th reply is a provider error (the others ``Go(1);``)."""
    calls = []

    def reply(*_):
        calls.append(1)
        if len(calls) == call:
            raise RuntimeError("the provider is down")
        return ModelOutput.from_content("mockllm/model", "Go(1);")

    return get_model("mockllm/model", custom_outputs=reply)


def _episodes(run_dir: Path) -> list[str]:
    return sorted(path.name for path in (run_dir / "episodes").iterdir())


def _check_continued(run_dir: Path) -> None:
    """Each episode once and sealed, the second one's paid attempt set aside beside it."""
    second = "01-06-02_t1"
    assert _episodes(run_dir) == [f"{TASK}_t1", second, f"{second}.attempt-1"]
    attempt = read_turns(run_dir / "episodes" / f"{second}.attempt-1")
    assert [turn.reply for turn in attempt[1:]] == ["Go(1);"]  # the paid call, kept
    assert read_result(run_dir / "episodes" / second).attempts == 2
    with open(run_dir / "summary.csv") as f:
        assert sorted(r["episode_id"] for r in csv.DictReader(f)) == [f"{TASK}_t1", second]


def test_eval_retry_continues_the_run_dir(testbed_dir, tmp_path):
    """A model error in the second episode (call 4 of 2 x 2); `eval-retry` plays it again."""
    from inspect_ai import eval_retry

    task = make_testbed(tasks=TWO_TASKS, arenas_dir=str(testbed_dir), resolution=64,
                        max_scripts=2, run_dir=str(tmp_path / "run"))
    failed = inspect_eval(task, model=_failing_on(4), log_dir=str(tmp_path / "logs"),
                          display="none", max_samples=1)[0]
    assert failed.status == "error" and "the provider is down" in failed.error.message
    # the log's file, as `inspect eval-retry LOG` does: given the EvalLog itself, inspect_ai
    # loads its samples inside its loop and patches asyncio for the rest of the process
    # (nest_asyncio), and later event loops are left unclosed
    retried = eval_retry(failed.location, log_dir=str(tmp_path / "logs"), display="none",
                         max_samples=1)[0]
    assert retried.status == "success", retried.error
    _check_continued(tmp_path / "run")


def test_a_second_eval_into_the_run_dir_keeps_its_finished_episodes(testbed_dir, tmp_path):
    def eval_once(model):
        task = make_testbed(tasks=TWO_TASKS, arenas_dir=str(testbed_dir), resolution=64,
                            max_scripts=2, run_dir=str(tmp_path / "run"))
        return inspect_eval(task, model=model, log_dir=str(tmp_path / "logs"),
                            display="none", max_samples=1)[0]

    assert eval_once(_failing_on(4)).status == "error"
    played_once = read_result(tmp_path / "run" / "episodes" / f"{TASK}_t1")
    log = eval_once(_failing_on(0))
    assert log.status == "success", log.error
    _check_continued(tmp_path / "run")
    # the finished episode was scored from its result, not played (and paid) again
    assert read_result(tmp_path / "run" / "episodes" / f"{TASK}_t1") == played_once
    first = next(s for s in log.samples if s.id == TASK)
    assert first.metadata["llm_aai"]["played_before"]
    assert "played before this attempt" in first.scores["episode_scorer"].explanation


def test_retry_on_error_sets_the_paid_attempt_aside(testbed_dir, tmp_path):
    task = make_testbed(tasks=TWO_TASKS, arenas_dir=str(testbed_dir), resolution=64,
                        max_scripts=2, run_dir=str(tmp_path / "run"))
    log = inspect_eval(task, model=_failing_on(4), log_dir=str(tmp_path / "logs"),
                       display="none", max_samples=1, retry_on_error=1)[0]
    assert log.status == "success", log.error
    _check_continued(tmp_path / "run")


def test_a_retry_may_change_how_the_calls_are_made(testbed_dir, tmp_path):
    """`eval-retry --max-connections 2` (the answer to rate limits), other timeouts or a newer
    inspect_ai continue the run: they change how the calls are made, not what the model says.
    Its temperature still may not change."""
    from inspect_ai import eval_retry

    def make_task():
        return make_testbed(tasks=TWO_TASKS, arenas_dir=str(testbed_dir), resolution=64,
                            max_scripts=2, run_dir=str(tmp_path / "run"))

    failed = inspect_eval(make_task(), model=_failing_on(4), log_dir=str(tmp_path / "logs"),
                          display="none", max_samples=1, max_connections=8, timeout=60)[0]
    assert failed.status == "error" and "the provider is down" in failed.error.message
    path = tmp_path / "run" / "manifest.json"
    manifest = json.loads(path.read_text())
    calls = manifest["agent"]["calls"]
    assert calls["generate_config"] == {"max_connections": 8, "timeout": 60}  # recorded
    calls["inspect_ai"] = "0.3.1"  # as if an older inspect_ai started it
    path.write_text(json.dumps(manifest))
    retried = eval_retry(failed.location, log_dir=str(tmp_path / "logs"), display="none",
                         max_samples=1, max_connections=2, timeout=30, max_retries=1)[0]
    assert retried.status == "success", retried.error
    _check_continued(tmp_path / "run")
    log = inspect_eval(make_task(), model=_failing_on(0), log_dir=str(tmp_path / "logs"),
                       display="none", max_connections=2, temperature=0.5)[0]
    assert log.status == "error"
    assert "agent.calls.generate_config.temperature is absent there, 0.5 now" in (
        log.error.message)


def test_a_retried_sample_whose_episode_was_sealed_is_scored_from_it(testbed_dir, tmp_path,
                                                                      monkeypatch):
    """The sample fails after its episode was sealed (the summary could not be written) and
    --retry-on-error retries it in the same eval: it is scored from the episode, not refused
    as having no episode left."""
    write_summary, failures = RunStore.write_summary, []

    def full_disk_once(store):
        if not failures:
            failures.append(store.root)
            raise OSError(28, "No space left on device")
        return write_summary(store)

    monkeypatch.setattr(RunStore, "write_summary", full_disk_once)
    task = make_testbed(tasks=TASK, arenas_dir=str(testbed_dir), resolution=64,
                        max_scripts=1, run_dir=str(tmp_path / "run"))
    model = get_model("mockllm/model",
                      custom_outputs=[ModelOutput.from_content("mockllm/model", "Go(1);")] * 2)
    log = inspect_eval(task, model=model, log_dir=str(tmp_path / "logs"), display="none",
                       retry_on_error=1)[0]
    assert log.status == "success", log.error
    assert failures == [tmp_path / "run"]
    assert _episodes(tmp_path / "run") == [f"{TASK}_t1"]  # played once, nothing set aside
    assert read_result(tmp_path / "run" / "episodes" / f"{TASK}_t1").attempts == 1
    assert log.samples[0].metadata["llm_aai"]["played_before"]


def test_a_run_dir_of_other_settings_is_refused(testbed_dir, tmp_path):
    outputs = [ModelOutput.from_content("mockllm/model", "Go(1);")] * 3
    _eval(get_model("mockllm/model", custom_outputs=outputs), tmp_path, testbed_dir,
          max_scripts=1)
    task = make_testbed(tasks=TASK, arenas_dir=str(testbed_dir), resolution=64,
                        max_scripts=2, run_dir=str(tmp_path / "run"))
    log = inspect_eval(task, model=get_model("mockllm/model", custom_outputs=outputs),
                       log_dir=str(tmp_path / "logs"), display="none")[0]
    assert log.status == "error"
    assert ("holds a run of other settings (run.config.protocol.max_scripts is 1 there, 2 "
            "now)") in log.error.message
    assert _episodes(tmp_path / "run") == [f"{TASK}_t1"]


def test_a_run_dir_another_process_writes_is_refused(testbed_dir, tmp_path):
    """Two `inspect eval` into one run_dir: the second is refused, as `run --resume` is."""
    outputs = [ModelOutput.from_content("mockllm/model", "Go(1);")] * 2
    _, run_dir = _eval(get_model("mockllm/model", custom_outputs=outputs), tmp_path,
                       testbed_dir, max_scripts=1, trials=2)
    (run_dir / "episodes" / f"{TASK}_t2" / "result.json").unlink()  # one left to play
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, filelock; "
         "lock = filelock.FileLock(sys.argv[1], timeout=60); lock.acquire(); "
         "print('held', flush=True); sys.stdin.read()", str(run_dir / ".lock")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        task = make_testbed(tasks=TASK, arenas_dir=str(testbed_dir), resolution=64,
                            max_scripts=1, trials=2, run_dir=str(run_dir))
        log = inspect_eval(task, model=get_model("mockllm/model", custom_outputs=outputs),
                           log_dir=str(tmp_path / "logs"), display="none")[0]
    finally:
        holder.communicate("", timeout=30)
    assert log.status == "error"
    assert f"another process is running {run_dir}" in log.error.message
    assert _episodes(run_dir) == [f"{TASK}_t1", f"{TASK}_t2"]  # nothing set aside


@pytest.mark.parametrize(("where", "says"), [
    # /proc/self lists entries (a run to continue) but takes no new file: was 'another
    # process is running /proc/self'
    (lambda tmp: Path("/proc/self"),
     "cannot lock the run /proc/self: /proc/self/.lock cannot be created: No such file"),
    (lambda tmp: Path("/proc/llm-aai-run"),
     "cannot create the run directory /proc/llm-aai-run: No such file or directory"),
    (lambda tmp: tmp / "notes.txt", "cannot write the run in {tmp}/notes.txt: it is a file"),
    # was 'cannot create the run directory .../notes.txt/run: File exists'
    (lambda tmp: tmp / "notes.txt" / "run",
     "cannot write runs in {tmp}/notes.txt: {tmp}/notes.txt is a file, not a folder"),
])
def test_a_run_dir_that_cannot_be_made_or_locked_says_why(testbed_dir, tmp_path, where, says):
    (tmp_path / "notes.txt").write_text("notes")
    task = make_testbed(tasks=TASK, arenas_dir=str(testbed_dir), resolution=64, max_scripts=1,
                        run_dir=str(where(tmp_path)))
    outputs = [ModelOutput.from_content("mockllm/model", "Go(1);")]
    log = inspect_eval(task, model=get_model("mockllm/model", custom_outputs=outputs),
                       log_dir=str(tmp_path / "logs"), display="none")[0]
    assert log.status == "error"
    assert says.format(tmp=tmp_path) in log.error.message
    assert "another process" not in log.error.message
    assert (tmp_path / "notes.txt").read_text() == "notes"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["logs", "notes.txt"]


def test_a_sample_that_cannot_count_tokens_offline_says_what_to_set(testbed_dir, tmp_path,
                                                                  monkeypatch):
    """A task made before its eval (no model active then) meets it at its first call."""
    import tiktoken.registry

    monkeypatch.delitem(tiktoken.registry.ENCODINGS, "o200k_base", raising=False)
    (tmp_path / "empty-cache").mkdir()
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "empty-cache"))
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY",
                 "no_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")  # no way out
    task = make_testbed(tasks=TASK, arenas_dir=str(testbed_dir), resolution=64, max_scripts=1,
                        run_dir=str(tmp_path / "run"))
    log = inspect_eval(task, model=get_model("mockllm/model"), log_dir=str(tmp_path / "logs"),
                       display="none")[0]
    assert log.status == "error"
    assert log.error.message.startswith(
        "Inspect counts tokens with tiktoken, which could not load its "
        f"encoding from {tmp_path / 'empty-cache'} nor download it (ProxyError")
    assert "offline, set TIKTOKEN_CACHE_DIR=" in log.error.message


def test_an_eval_that_ends_closes_only_its_own_runs(testbed_dir, tmp_path, monkeypatch):
    """Two evals in one process (eval_async twice): the end of one leaves the other's runs
    open, locked, even between a sample's run.get() and its play()."""
    config = RunConfig(model="inspect", tasks=TASK, arenas_dir=testbed_dir)
    model = get_model("mockllm/model")
    ending = RunEnd(eval_set_id=None, run_id="eval-a", exception=None, logs=[])

    def locked(opened) -> bool:
        try:
            FileLock(opened.run_dir / ".lock", timeout=0).acquire()
        except Timeout:
            return True
        return False

    async def scenario():
        own, shared = _LazyRun(config, str(tmp_path / "a")), _LazyRun(config, None)
        other = _LazyRun(config, str(tmp_path / "b"))
        monkeypatch.setattr(task_module, "_eval_run", lambda: "eval-a", raising=False)
        mine, both = await own.get(model), await shared.get(model)
        monkeypatch.setattr(task_module, "_eval_run", lambda: "eval-b", raising=False)
        theirs, _ = await other.get(model), await shared.get(model)
        await _ReleaseRuns().on_run_end(ending)
        assert mine.closed and not locked(mine)
        assert not theirs.closed and locked(theirs)  # eval-b's sample may play in it now
        assert not both.closed and locked(both)  # eval-b plays in it too
        await _ReleaseRuns().on_run_end(dataclasses.replace(ending, run_id="eval-b"))
        assert theirs.closed and both.closed and not locked(both)

    try:
        anyio.run(scenario)
    finally:
        _LAZY_RUNS.clear()  # the runs of this test end with it


def test_the_manifest_records_what_inspect_called_the_model_with(testbed_dir, tmp_path):
    """Inspect's provider makes the calls: its GenerateConfig is recorded, not our client's
    defaults (temperature 0, 6 retries, 120 s), which the manifest no longer claims."""
    def eval_once(temperature):
        model = get_model("mockllm/model", config=GenerateConfig(top_p=0.5),
                          custom_outputs=[ModelOutput.from_content("mockllm/model", "Go(1);")])
        task = make_testbed(tasks=TASK, arenas_dir=str(testbed_dir), resolution=64,
                            max_scripts=1, run_dir=str(tmp_path / "run"))
        return inspect_eval(task, model=model, log_dir=str(tmp_path / "logs"), display="none",
                            temperature=temperature)[0]

    assert eval_once(0.3).status == "success"
    run_dir = tmp_path / "run"
    manifest = read_manifest(run_dir)
    calls = dict(manifest.agent["calls"])
    may_change = calls.pop("may_change")
    assert calls == {
        "by": "inspect_ai", "inspect_ai": importlib.metadata.version("inspect_ai"),
        "model": "mockllm/model", "generate_config": {"temperature": 0.3, "top_p": 0.5}}
    # how the calls are made may change on a retry; what the model is asked for may not
    assert {"inspect_ai", "generate_config.max_connections",
            "generate_config.timeout"} <= set(may_change)
    assert not {"generate_config.temperature", "generate_config.top_p", "model"} & set(
        may_change)
    run = json.loads((run_dir / "manifest.json").read_text())["run"]
    assert set(run["config"]["model_options"]) == {"keep_last_images", "keep_last_turns",
                                                   "prompt_caching", "fold_system_prompt"}
    assert "concurrency" not in run["config"] and run["cost_known"] is False
    assert {"run.config.model_options.temperature", "run.config.model_options.max_retries",
            "run.config.model_options.timeout_s", "run.config.concurrency"} <= set(
        manifest.agent["not_applicable"])
    assert read_settings(run_dir).config.model == "mockllm/model"  # readers read it as before
    # a retry at another temperature would mix two experiments in one run
    log = eval_once(0.7)
    assert log.status == "error"
    assert "agent.calls.generate_config.temperature is 0.3 there, 0.7 now" in log.error.message
