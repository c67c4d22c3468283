"""The ways a local model server fails, through whole runs.

Real subprocess, real litellm HTTP, the fake server on 127.0.0.1 playing a small local
server: a context window, cut replies, a reported model name.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import pytest

from llm_aai.cli.analyze import main as analyze
from llm_aai.llm.fake_server import Cut, Delay, FakeChatServer, _prompt_tokens
from llm_aai.logs import read_turns
from llm_aai.view import build_site

TASKS = "01-04-03,01-06-02"
MAX_TOKENS = 64


def run_cli(args, timeout=240):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    return subprocess.run([sys.executable, "-m", "llm_aai.run", *map(str, args)],
                          capture_output=True, text=True, env=env, timeout=timeout)


def base_args(testbed_dir, out, url, scripts=3, tasks=TASKS):
    return ["--model", "openai/local", "--api-base", url, "--tasks", tasks,
            "--arenas-dir", testbed_dir, "--out", out, "--run-id", "r", "--resolution", 64,
            "--max-scripts", scripts, "--max-tokens", MAX_TOKENS, "--no-progress",
            "--concurrency", 1]


def window_after_first_request(server: FakeChatServer, margin: int = 10):
    """A responder fixing the server's context at the first request's size plus ``margin``:
    every episode's first request fits, its second (one more exchange) does not."""

    def respond(body):
        if server.context_window is None:
            server.context_window = _prompt_tokens(body) + int(body["max_tokens"]) + margin
        return "Go(3);"

    return respond


def test_a_context_overflow_ends_its_episode_and_the_run_goes_on(testbed_dir, tmp_path,
                                                                  capsys):
    server = FakeChatServer()
    server._responder = window_after_first_request(server)
    with server:
        done = run_cli(base_args(testbed_dir, tmp_path, server.url))
        statuses = [r.action for r in server.requests]
    assert done.returncode == 0, done.stderr
    assert "refused a request" not in done.stderr
    results = {}
    for task in TASKS.split(","):
        episode = tmp_path / "r" / "episodes" / f"{task}_t1"
        results[task] = json.loads((episode / "result.json").read_text())
        assert len(read_turns(episode)) == 2  # the start and the one reply that fitted
    for result in results.values():
        assert result["end_reason"] == "context_overflow", result
        assert result["scripts_used"] == 1 and result["infra_error"] is None
        assert result["passed"] is False
    assert len(statuses) == 4  # each episode: one reply, one overflow (never retried)
    assert "context_overflow" in done.stderr  # the warning names what happened
    # analyze counts them apart: excluded from k/n, named with their own mark
    assert analyze([str(tmp_path / "r")]) == 0
    shown = capsys.readouterr().out
    assert "0/0" in shown and "2 episode(s) ended by a context overflow" in shown


def test_keep_last_turns_fits_the_conversation_in_the_window(testbed_dir, tmp_path):
    """The same window with ``--keep-last-turns 1``: every request is the prompt and one
    message, so no episode overflows and each plays all its scripts."""
    server = FakeChatServer()
    server._responder = window_after_first_request(server)
    with server:
        done = run_cli([*base_args(testbed_dir, tmp_path, server.url), "--keep-last-turns", 1])
        bodies = [r.body for r in server.requests]
    assert done.returncode == 0, done.stderr
    for task in TASKS.split(","):
        result = json.loads((tmp_path / "r" / "episodes" / f"{task}_t1" / "result.json")
                            .read_text())
        assert result["end_reason"] != "context_overflow" and result["scripts_used"] == 3
    assert len(bodies) == 6
    assert all([m["role"] for m in body["messages"]] == ["system", "user"] for body in bodies)


def test_the_dry_run_names_the_longest_request(testbed_dir, tmp_path, capsys):
    """The dry run's longest request is within 10% of the largest one the run then sends
    (counted by the server at the dry run's 4 characters a token), and --keep-last-turns
    shortens it."""
    from llm_aai.cli import run as run_cli_module

    argv = [*map(str, base_args(testbed_dir, tmp_path, "http://127.0.0.1:9", tasks="01-04-03")),
            "--observation", "text", "--dry-run"]
    assert run_cli_module.main(argv) == 0
    longest = _longest(capsys.readouterr().out)
    assert run_cli_module.main([*argv, "--keep-last-turns", "1"]) == 0
    assert _longest(capsys.readouterr().out) < longest
    with FakeChatServer(default="Go(3);") as server:
        done = run_cli([*base_args(testbed_dir, tmp_path, server.url, tasks="01-04-03"),
                        "--observation", "text"])
        sent = max(_prompt_tokens(r.body) for r in server.requests)
    assert done.returncode == 0, done.stderr
    assert abs(longest - sent) <= 0.1 * sent, (longest, sent)


def _longest(out: str) -> int:
    line = next(line for line in out.splitlines() if line.startswith("longest request:"))
    return int(line.split()[2].replace(",", ""))


def test_a_reply_cut_at_max_tokens_is_logged_told_and_shown(testbed_dir, tmp_path):
    """The server stops a reply at the length limit mid-Think: the turn logs
    ``finish_reason`` "length", the feedback says the reply was cut (not that the model
    left Think( open), and the viewer marks the turn."""
    with FakeChatServer([Cut('Think("The ball is ahead, so I will')],
                        default="Go(3);") as server:
        done = run_cli(base_args(testbed_dir, tmp_path, server.url, scripts=2, tasks="01-04-03"))
        bodies = [r.body for r in server.requests]
    assert done.returncode == 0, done.stderr
    episode = tmp_path / "r" / "episodes" / "01-04-03_t1"
    turns = read_turns(episode)
    assert turns[1].finish_reason == "length" and turns[1].commands is None
    assert turns[2].finish_reason == "stop"
    feedback = turns[2].sent_preamble
    assert "cut off at the reply length limit" in feedback, feedback
    assert "never closed" not in feedback and "cut off" in json.dumps(bodies[1]["messages"])
    build_site([tmp_path / "r"], tmp_path / "site")
    page = next((tmp_path / "site" / "episode").rglob("01-04-03_t1.html"))
    html = page.read_text(encoding="utf-8")
    assert html.count('class="cut-reply"') == 1


@pytest.mark.parametrize("budget", [(), ("--budget-usd", 5, "--price-per-mtok", "1,2")],
                         ids=["no-budget", "budget"])
def test_the_cache_never_answers_one_server_with_anothers_replies(testbed_dir, tmp_path,
                                                                  budget):
    """Two servers under one alias serving different models share a cache: the second run
    is sent to its own server (the key holds the address and the listed models), and each
    manifest records the model its server listed. A budget (whose client sits between the
    cache and the model client) leaves the key as it is."""
    cache = tmp_path / "cache"
    args = ["--cache", cache, "--tasks", "01-04-03", *budget]
    with FakeChatServer(default="Go(3);", model_name="weights-a.gguf") as a:
        done = run_cli([*base_args(testbed_dir, tmp_path / "a", a.url, scripts=2), *args])
        assert done.returncode == 0, done.stderr
        assert len(a.requests) == 2
        again = run_cli([*base_args(testbed_dir, tmp_path / "a2", a.url, scripts=2), *args])
        assert again.returncode == 0 and len(a.requests) == 2  # the same server: cached
    with FakeChatServer(default="Go(3);", model_name="weights-b.gguf") as b:
        done = run_cli([*base_args(testbed_dir, tmp_path / "b", b.url, scripts=2), *args])
        assert done.returncode == 0, done.stderr
        assert len(b.requests) == 2  # not answered from server a's replies
    for name, served in (("a", "weights-a.gguf"), ("b", "weights-b.gguf")):
        manifest = json.loads((tmp_path / name / "r" / "manifest.json").read_text())
        assert manifest["agent"]["served_models"] == [served]


def test_the_viewer_shows_episodes_that_ended_before_their_first_reply(testbed_dir, tmp_path):
    """A first request over the server's context ends both episodes before any reply: the
    run and its site are still made, each episode page saying how it ended."""
    with FakeChatServer(context_window=200) as server:
        done = run_cli(base_args(testbed_dir, tmp_path, server.url))
    assert done.returncode == 0, done.stderr
    report = build_site([tmp_path / "r"], tmp_path / "site")
    assert report.episodes == 2
    for task in TASKS.split(","):
        page = next((tmp_path / "site" / "episode").rglob(f"{task}_t1.html"))
        assert "context_overflow" in page.read_text(encoding="utf-8")
    view = subprocess.run([sys.executable, "-m", "llm_aai.view", str(tmp_path / "r"),
                           "--out", str(tmp_path / "site2")], capture_output=True, text=True,
                          timeout=240)
    assert view.returncode == 0, view.stderr


def test_an_ollama_model_priced_at_zero_is_warned_about(testbed_dir, tmp_path, capsys):
    """litellm prices ``ollama_chat/*`` at $0: the run says so rather than show $0.00 as a
    known cost without a word (docs/cost.md says the same)."""
    from llm_aai.cli import run as run_cli_module

    argv = ["--model", "ollama_chat/llama3.2", "--api-base", "http://127.0.0.1:9",
            "--tasks", "01-04-03", "--arenas-dir", str(testbed_dir), "--out", str(tmp_path),
            "--observation", "text", "--dry-run"]
    assert run_cli_module.main(argv) == 0
    captured = capsys.readouterr()
    assert "litellm prices ollama_chat/llama3.2 at $0" in captured.err
    assert "cost: $0.0000" in captured.out


def test_a_refused_connection_and_a_timeout_are_not_labelled_as_http_statuses(testbed_dir,
                                                                           tmp_path):
    """litellm says 500 for a refused connection and 408 for its own timeout; no server sent
    either, and the episode's error says what happened instead."""
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    refused = run_cli([*base_args(testbed_dir, tmp_path / "refused", closed, tasks="01-04-03"),
                       "--max-retries", 0, "--max-relaunches", 0])
    with FakeChatServer(responder=lambda body: Delay(6)) as server:
        slow = run_cli([*base_args(testbed_dir, tmp_path / "slow", server.url,
                                   tasks="01-04-03"), "--max-retries", 0, "--timeout", 2,
                        "--max-relaunches", 0])
    errors = {}
    for name, done in (("refused", refused), ("slow", slow)):
        result = json.loads((tmp_path / name / "r" / "episodes" / "01-04-03_t1" /
                             "result.json").read_text())
        assert result["end_reason"] == "infrastructure", done.stderr
        errors[name] = result["infra_error"]
    assert "HTTP status 500" not in errors["refused"], errors
    assert "no connection to the server, no HTTP status" in errors["refused"], errors
    assert "HTTP status 408" not in errors["slow"], errors
    assert "timeout" in errors["slow"] and "no HTTP status" in errors["slow"], errors


def _last_text(body) -> str:
    content = body["messages"][-1]["content"]
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text", "") for part in content if part.get("type") == "text")


def test_lenient_reading_runs_a_script_before_its_plan_and_refuses_our_feedback_copied(
        testbed_dir, tmp_path):
    """A small model answers feedback by repeating it (example script included), and adds
    plans after its script: the copy is refused with feedback, the script runs, the plan
    does not (#35 item 8)."""
    replies = iter(["Think(unclosed", None, "Go(1);\nNext turn I will Turn(30); Go(5);"])

    def respond(body):
        reply = next(replies, "Go(1);")
        return _last_text(body) if reply is None else reply  # None: echo the feedback

    with FakeChatServer(responder=respond) as server:
        done = run_cli([*base_args(testbed_dir, tmp_path, server.url, scripts=4,
                                   tasks="01-04-03"), "--script-mode", "lenient"])
    assert done.returncode == 0, done.stderr
    turns = read_turns(tmp_path / "r" / "episodes" / "01-04-03_t1")
    assert "for example: Think(" in turns[2].reply  # the model sent our feedback back
    assert turns[2].commands is None and "repeats our message" in turns[2].parse_error
    assert turns[2].actions == turns[1].actions  # the refused copy took the no-op step
    assert turns[3].commands == ({"op": "Go", "arg": 1},)
    assert any("not run" in note for note in turns[3].normalizations), turns[3].normalizations


def test_a_server_that_drops_the_system_prompt_is_warned_about_once_noted_and_recorded(
        testbed_dir, tmp_path, capsys):
    """A chat template without a system role drops the system prompt, and the server counts
    a fraction of the tokens sent: the run warns once, notes every such turn, and records
    the count in the manifest; ``--fold-system-prompt`` sends the prompt where it is kept
    (#35 item 3)."""
    with FakeChatServer(default="Go(1);", drops={"system"}) as server:
        dropped = run_cli(base_args(testbed_dir, tmp_path / "a", server.url, scripts=2))
        folded = run_cli([*base_args(testbed_dir, tmp_path / "b", server.url, scripts=2,
                                     tasks="01-04-03"), "--fold-system-prompt"])
        bodies = [request.body for request in server.requests]
    assert dropped.returncode == 0, dropped.stderr
    assert dropped.stderr.count("lost input") == 1, dropped.stderr  # once per run
    assert "--fold-system-prompt" in dropped.stderr
    noted = [turn for task in TASKS.split(",")
             for turn in read_turns(tmp_path / "a" / "r" / "episodes" / f"{task}_t1")
             if any(note.startswith("lost input") for note in turn.normalizations)]
    assert len(noted) == 4  # two turns in each of two episodes
    manifest = json.loads((tmp_path / "a" / "r" / "manifest.json").read_text())
    assert manifest["warnings"]["lost_input"]["turns"] == 4
    assert manifest["warnings"]["lost_input"]["first"].startswith("lost input")
    for run, said in (("a", ["note: r: in 4 turn(s) the server counted far fewer"]),
                      ("b", [])):
        capsys.readouterr()
        assert analyze([str(tmp_path / run / "r")]) == 0
        out = capsys.readouterr().out
        assert [line[:50] for line in out.splitlines() if "did not see" in line] == said
    assert folded.returncode == 0 and "lost input" not in folded.stderr, folded.stderr
    assert "warnings" not in json.loads((tmp_path / "b" / "r" / "manifest.json").read_text())
    system = bodies[0]["messages"][0]
    assert system["role"] == "system"
    first = bodies[4]["messages"]  # the folded run's first request
    assert [message["role"] for message in first] == ["user"]
    content = first[0]["content"]
    text = content if isinstance(content, str) else content[0]["text"]
    assert text.startswith(system["content"])  # the prompt, then the turn


def test_stop_sequences_and_sampling_parameters_reach_the_server(testbed_dir, tmp_path):
    with FakeChatServer(default="Go(1);") as server:
        done = run_cli([*base_args(testbed_dir, tmp_path, server.url, scripts=1,
                                   tasks="01-04-03"),
                        "--stop", "</s>", "--stop", "\nUser:", "--sampling", "top_p=0.9",
                        "--sampling", "top_k=40", "--sampling", "cache_prompt=true",
                        "--sampling", 'grammar="root ::= [a-z]+"'])
        body = server.requests[0].body
    assert done.returncode == 0, done.stderr
    assert body["stop"] == ["</s>", "\nUser:"]
    assert (body["top_p"], body["top_k"], body["cache_prompt"]) == (0.9, 40, True)
    assert isinstance(body["top_k"], int) and body["grammar"] == "root ::= [a-z]+"
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    options = manifest["run"]["config"]["model_options"]
    assert options["stop"] == ["</s>", "\nUser:"]
    assert options["sampling"] == [["top_p", 0.9], ["top_k", 40], ["cache_prompt", True],
                                   ["grammar", "root ::= [a-z]+"]]


@pytest.mark.parametrize("flag, message", [
    ("top_p", "argument --sampling: 'top_p' is not KEY=VALUE"),
    ("top_p=high", "argument --sampling: 'top_p=high': the value must be a finite number"),
    ("top_p=nan", "argument --sampling: 'top_p=nan': the value must be a finite number"),
    ("max_tokens=3", "error: --sampling cannot set 'max_tokens': --max-tokens does"),
    ("stop=\"x\"", "error: --sampling cannot set 'stop': --stop does"),
    ("top-p=0.9", "error: --sampling 'top-p' is not a parameter name"),
])
def test_a_bad_sampling_parameter_is_refused_naming_the_flag(testbed_dir, tmp_path, capsys,
                                                              flag, message):
    from llm_aai.cli import run as run_cli_module

    argv = ["--model", "openai/local", "--api-base", "http://127.0.0.1:9/v1", "--tasks",
            "01-04-03", "--arenas-dir", str(testbed_dir), "--out", str(tmp_path),
            "--sampling", flag, "--dry-run"]
    try:
        code = run_cli_module.main(argv)
    except SystemExit as exited:  # argparse's own refusal
        code = exited.code
    assert code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err, err


def test_a_timed_out_call_is_not_retried_behind_the_reply_the_server_still_generates(
        testbed_dir, tmp_path):
    """A slow server: the call times out and is not retried (a retry would wait behind the
    reply the server goes on generating), and the error says what a slow server needs
    (#35 item 6)."""
    # 4 s: litellm's first call in a process takes a while to send on a busy machine
    with FakeChatServer(responder=lambda body: Delay(30)) as server:
        done = run_cli([*base_args(testbed_dir, tmp_path, server.url, tasks="01-04-03"),
                        "--max-retries", 3, "--timeout", 4, "--max-relaunches", 0])
        sent = len(server.requests)
    result = json.loads((tmp_path / "r" / "episodes" / "01-04-03_t1" /
                         "result.json").read_text())
    assert result["end_reason"] == "infrastructure", done.stderr
    assert sent == 1, done.stderr  # not four: the retries would each have waited and failed
    error = result["infra_error"]
    assert "not retried" in error and "--timeout" in error and "--max-tokens" in error, error
    assert f"{MAX_TOKENS} tokens in 4 s takes {MAX_TOKENS / 4:.1f} tokens/s" in error, error
