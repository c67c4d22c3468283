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
    "frame control": (["--control", "frame", "--max-replies", "6"],
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
                "--control", "frame", "--max-replies", "300", "--physics-build", build]
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
