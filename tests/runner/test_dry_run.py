"""``--dry-run``: the plan and an estimate, checked against what a fake-server run really used."""

from __future__ import annotations

from llm_aai.cli import run as run_cli
from llm_aai.llm.fake_server import FakeChatServer
from llm_aai.logs import RunStore


def test_the_dry_run_estimate_is_within_a_quarter_of_a_real_run(testbed_dir, tmp_path, capsys):
    with FakeChatServer(default='Think("I turn to look for the goal.");Turn(6);') as server:
        argv = ["--model", "openai/fake", "--api-base", server.url, "--tasks",
                "01-04-03,01-06-02", "--trials", "2", "--arenas-dir", str(testbed_dir),
                "--out", str(tmp_path), "--run-id", "r", "--resolution", "64",
                "--max-scripts", "4", "--no-progress", "--price-per-mtok", "3,15"]
        assert run_cli.main([*argv, "--dry-run"]) == 0
        printed = capsys.readouterr().out
        assert server.requests == [] and list(tmp_path.iterdir()) == []  # nothing called, written
        assert run_cli.main(argv) == 0
        capsys.readouterr()
        calls = len(server.requests)
    lines = dict(line.split(": ", 1) for line in printed.splitlines()[1:] if ": " in line)
    estimated = {key: int(lines[key].split()[0].replace(",", ""))
                 for key in ("requests", "input tokens")}
    estimated_usd = float(lines["cost"].lstrip("$").replace(",", ""))
    results = RunStore(tmp_path / "r").finished_results().values()
    real_input = sum(r.input_tokens for r in results)
    real_usd = sum(r.cost_usd for r in results)
    with capsys.disabled():
        print(f"\ndry run: {estimated['requests']} requests, {estimated['input tokens']} input "
              f"tokens, ${estimated_usd:.4f}; the run: {calls} requests, {real_input} input "
              f"tokens, ${real_usd:.4f}")
    assert estimated["requests"] == calls == 16
    assert abs(estimated["input tokens"] - real_input) <= 0.25 * real_input
    assert abs(estimated_usd - real_usd) <= 0.25 * real_usd
    assert "2 trials = 4 episodes, at most 4 scripts each" in printed  # the plan
