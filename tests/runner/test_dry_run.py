"""``--dry-run``: the plan and an estimate, checked against what a fake-server run really used."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from llm_aai.cli import run as run_cli
from llm_aai.llm.fake_server import FakeChatServer, count_tokens
from llm_aai.logs import RunStore
from llm_aai.runner import estimate_run
from llm_aai.runner.estimate import RunEstimate

TURN = 'Think("I turn to look for the goal.");Turn(6);'
TURN_20_STEPS = 'Think("I turn round twice.");Turn(60);Turn(60);'  # the assumed script
MODES = {  # the mode's flags and the reply the fake model gives in it
    "action control": (["--control", "action", "--max-replies", "6"],
                      'Think("I look to the left.");left'),
    "observe every 6": (["--observe-every", "6", "--max-scripts", "4"], TURN_20_STEPS),
    "filmstrip": (["--observe-every", "6", "--filmstrip", "--max-scripts", "4"],
                  TURN_20_STEPS),
    "no script cap": (["--max-scripts", "0", "--max-replies", "5"], TURN),
    "text observation": (["--observation", "text", "--max-scripts", "4"], TURN),
    "text and images": (["--observation", "both", "--max-scripts", "4"], TURN),
    "plan then act": (["--prompt", "plan"], 'Think("To the goal.");Turn(6);Go(3);'),
    "across tasks": (["--context", "across-tasks", "--max-scripts", "4"], TURN),
}




def _estimate(printed: str) -> tuple[int, int, float]:
    """Requests, input tokens and dollars as the dry run printed them."""
    lines = dict(line.split(": ", 1) for line in printed.splitlines()[1:] if ": " in line)
    requests, input_tokens = (int(lines[key].split()[0].replace(",", ""))
                              for key in ("requests", "input tokens"))
    return requests, input_tokens, float(lines["cost"].lstrip("$").replace(",", ""))


@dataclass(frozen=True)
class Compared:
    """A dry run, the library's estimate told the replies' length, and the run itself."""

    printed: str
    exact: RunEstimate
    calls: int
    real_input: int
    real_usd: float

    def line(self, name: str) -> str:
        requests, input_tokens, usd = _estimate(self.printed)
        return (f"\n{name}: dry run {requests} requests, {input_tokens} input tokens, "
                f"${usd:.4f}; the run {self.calls} requests, {self.real_input} input tokens, "
                f"${self.real_usd:.4f} ({input_tokens / self.real_input - 1:+.1%} tokens, "
                f"{usd / self.real_usd - 1:+.1%} dollars); told the reply length "
                f"{self.exact.input_tokens / self.real_input - 1:+.1%} tokens")


def dry_run_then_run(flags: list[str], reply: str, testbed_dir, tmp_path, capsys) -> Compared:
    """``--dry-run`` (nothing called or written), then the same command for real."""
    with FakeChatServer(default=reply) as server:
        argv = ["--model", "openai/fake", "--api-base", server.url, "--tasks",
                "01-04-03,01-06-02", "--arenas-dir", str(testbed_dir), "--out", str(tmp_path),
                "--run-id", "r", "--resolution", "64", "--no-progress",
                "--price-per-mtok", "3,15", *flags]
        assert run_cli.main([*argv, "--dry-run"]) == 0
        printed = capsys.readouterr().out
        _, exact = estimate_run(run_cli.config_from_args(run_cli.build_parser().parse_args(argv)),
                                reply_tokens=count_tokens(reply))
        assert server.requests == [] and list(tmp_path.iterdir()) == []  # nothing called, written
        assert run_cli.main(argv) == 0
        capsys.readouterr()
        calls = len(server.requests)
    results = RunStore(tmp_path / "r").finished_results().values()
    return Compared(printed, exact, calls, sum(r.input_tokens for r in results),
                    sum(r.cost_usd for r in results))


def test_the_dry_run_estimate_is_within_a_quarter_of_a_real_run(testbed_dir, tmp_path, capsys):
    compared = dry_run_then_run(["--trials", "2", "--max-scripts", "4"], TURN, testbed_dir,
                                tmp_path, capsys)
    requests, input_tokens, usd = _estimate(compared.printed)
    with capsys.disabled():
        print(compared.line("paper"))
    assert requests == compared.calls == 16
    assert abs(compared.exact.input_tokens - compared.real_input) <= 0.01 * compared.real_input
    assert abs(input_tokens - compared.real_input) <= 0.25 * compared.real_input
    assert abs(usd - compared.real_usd) <= 0.25 * compared.real_usd
    assert "2 trials = 4 episodes, at most 4 scripts each" in compared.printed  # the plan


@pytest.mark.parametrize("mode", MODES)
def test_each_mode_is_estimated_from_its_own_requests(mode, testbed_dir, tmp_path, capsys):
    """Each mode's estimate against a fake-server run of it: the requests exactly (no episode
    ends early here), the dry run's input tokens within 10 % and its dollars within 25 % (the
    replies are shorter than the 60 tokens it assumes), and, told the replies' real length,
    the input tokens within 1 %: what is left is the shape of each request."""
    compared = dry_run_then_run(*MODES[mode], testbed_dir, tmp_path, capsys)
    requests, input_tokens, usd = _estimate(compared.printed)
    real_input = compared.real_input
    with capsys.disabled():
        print(compared.line(mode))
    assert requests == compared.calls == compared.exact.requests
    assert abs(compared.exact.input_tokens - real_input) <= 0.01 * real_input
    assert abs(input_tokens - real_input) <= 0.10 * real_input
    assert abs(usd - compared.real_usd) <= 0.25 * compared.real_usd


@pytest.mark.parametrize(("build", "replies"), [("3.x", 51), ("2019", 11)])
def test_frame_control_is_estimated_to_the_arena_time_limit(build, replies, make_arena,
                                                            tmp_path, capsys):
    # t=60 is 100 agent steps in 3.x (t counts 5 physics steps), 49 of them before the first
    # reply: 51 one-step replies fit before the limit, far fewer than the guard of 300; the
    # 2019 build's t counts 3 physics steps: 60 agent steps, 11 replies
    arenas = tmp_path / "arenas"
    arenas.mkdir()
    (arenas / "01-04-03.yaml").write_text(make_arena(t=60).read_text())
    with FakeChatServer(default="stay") as server:
        argv = ["--model", "openai/fake", "--api-base", server.url, "--tasks", "01-04-03",
                "--arenas-dir", str(arenas), "--out", str(tmp_path / "runs"), "--run-id", "r",
                "--resolution", "64", "--no-progress", "--price-per-mtok", "3,15",
                "--control", "action", "--max-replies", "300", "--physics-build", build]
        assert run_cli.main([*argv, "--dry-run"]) == 0
        requests, _, _ = _estimate(capsys.readouterr().out)
        assert run_cli.main(argv) == 0
        capsys.readouterr()
        assert requests == len(server.requests) == replies


def test_a_dry_run_refuses_what_the_run_would(testbed_dir, tmp_path, capsys):
    argv = ["--model", "openai/fake", "--api-base", "http://127.0.0.1:9", "--tasks", "01-04-03",
            "--arenas-dir", str(testbed_dir), "--out", str(tmp_path), "--observation", "text",
            "--backend", "unity", "--dry-run"]
    assert run_cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "--observation text needs the embedded backend" in err and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def _without_keys(monkeypatch):
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def _no_network(monkeypatch):
    """Any connection a dry run tried would fail this test (sockets to anywhere refused)."""
    import socket

    def refuse(*args, **kwargs):
        raise AssertionError(f"a dry run opened a connection: {args}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def test_a_dry_run_needs_no_key_and_no_network(testbed_dir, tmp_path, capsys, monkeypatch):
    _without_keys(monkeypatch)
    _no_network(monkeypatch)
    argv = ["--model", "claude", "--level", "1-10", "--trials", "3",
            "--arenas-dir", str(testbed_dir), "--out", str(tmp_path)]
    assert run_cli.main([*argv, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "model: claude = anthropic/claude-sonnet-4-6" in out
    assert "tasks: 40 (levels 1, 2, 3, 4, 5, 6, 7, 8, 9, 10) x 3 trials = 120 episodes" in out
    assert _estimate(out)[0] > 120 and _estimate(out)[2] > 0
    # said, so that the plan is not taken for a go-ahead (was silent)
    assert ("API key: not set (ANTHROPIC_API_KEY is empty), so the run would stop before its "
            "first episode") in out
    assert list(tmp_path.iterdir()) == []
    assert run_cli.main(argv) == 2  # the run itself still asks for the key first
    assert "ANTHROPIC_API_KEY" in capsys.readouterr().err and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("model", "env", "extra"), [
    ("gpt", {"OPENAI_API_KEY": "sk-dry-SENTINEL-0123456789"}, []),
    ("openai/gpt-4o", {}, ["--api-base", "http://127.0.0.1:9/v1"]),  # a local server
    ("heuristic", {}, []),
])
def test_a_dry_run_with_what_the_model_needs_says_nothing_of_a_key(
        model, env, extra, testbed_dir, tmp_path, capsys, monkeypatch):
    _without_keys(monkeypatch)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert run_cli.main(["--model", model, "--tasks", "01-04-03", "--arenas-dir",
                         str(testbed_dir), "--out", str(tmp_path), "--dry-run", *extra]) == 0
    captured = capsys.readouterr()
    assert "API key" not in captured.out
    assert "SENTINEL" not in captured.out + captured.err


def test_a_run_says_which_model_an_alias_means(testbed_dir, tmp_path, capsys):
    with FakeChatServer(default=TURN) as server:
        argv = ["--model", "gpt", "--api-base", server.url, "--tasks", "01-04-03",
                "--max-scripts", "1", "--arenas-dir", str(testbed_dir), "--out", str(tmp_path),
                "--no-progress"]
        assert run_cli.main(argv) == 0
    assert "model: gpt = openai/gpt-4o" in capsys.readouterr().err.splitlines()


def test_run_help_lists_every_builtin_agent_and_alias(capsys):
    from llm_aai.agents.registry import AGENTS
    from llm_aai.llm.aliases import MODEL_ALIASES

    with pytest.raises(SystemExit):
        run_cli.main(["--help"])
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps the help
    assert "oracle" in AGENTS and "oracle-frames" in AGENTS
    for name in AGENTS:
        assert f"{name}," in text or f"{name})" in text
    for alias, model in MODEL_ALIASES.items():
        assert f"{alias} = {model}" in text
    assert "claude = anthropic/claude-sonnet-4-6" in text and "gpt = openai/gpt-4o" in text


def test_the_readme_command_works_on_a_fresh_machine(testbed_dir, tmp_path, capsys, monkeypatch):
    """No --arenas-dir, no $LLM_AAI_ARENAS, an empty cache: the testbed comes from the mirror."""
    _without_keys(monkeypatch)
    monkeypatch.delenv("LLM_AAI_ARENAS", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("LLM_AAI_TESTBED_SOURCE", testbed_dir.as_uri())
    argv = ["--model", "claude", "--level", "1-10", "--trials", "3", "--dry-run"]
    assert run_cli.main(argv) == 0
    captured = capsys.readouterr()
    assert "downloading the pinned testbed once" in captured.err
    assert "120 episodes" in captured.out
    assert len(list((tmp_path / "cache").rglob("*.yaml"))) == 900


@pytest.mark.parametrize("agent", ["heuristic", "random", "oracle"])
def test_a_dry_run_of_a_builtin_agent_costs_nothing(agent, testbed_dir, tmp_path, capsys):
    """A built-in agent makes no model calls: $0, as the real run reports, not 'no price'."""
    argv = ["--model", agent, "--tasks", "01-04-03", "--arenas-dir", str(testbed_dir),
            "--out", str(tmp_path), "--dry-run"]
    assert run_cli.main(argv) == 0
    captured = capsys.readouterr()
    assert "cost: $0 (no model calls)" in captured.out.splitlines()
    assert "unknown" not in captured.out and "no price" not in captured.err
    assert list(tmp_path.iterdir()) == []


def test_a_dry_run_does_not_import_litellm(testbed_dir, tmp_path):
    """Most of a dry run's 12 s went to importing litellm, for the model's price."""
    import subprocess
    import sys

    code = ("import sys; from llm_aai.cli import run; "
            "code = run.main(['--model', 'gpt', '--level', '1-10', '--arenas-dir', sys.argv[1], "
            "'--dry-run']); "
            "print(code, sorted({'litellm', 'mujoco', 'ray'} & set(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code, str(testbed_dir)], capture_output=True,
                          text=True, timeout=120, check=True, cwd=tmp_path)
    assert done.stdout.splitlines()[-1] == "0 []"
    assert "cost: $" in done.stdout
