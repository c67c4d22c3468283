"""``--model oracle`` through the real runner: logged, analysed and replayed like a model."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from llm_aai.agents import resolve_agent
from llm_aai.agents.base import TurnInput
from llm_aai.logs import read_turns


def test_registered_with_its_budget_option():
    spec = resolve_agent("oracle", budget=123, temperature=0.5)  # model options are dropped
    agent = spec.create()
    assert agent.name == "oracle" and agent.budget == 123
    with pytest.raises(RuntimeError, match="not given its world"):
        agent.act(TurnInput(images=(), text=""))


@pytest.mark.slow
def test_oracle_run_is_logged_and_replays_exactly(testbed_dir, tmp_path):
    out = tmp_path / "runs"
    run = subprocess.run(
        [sys.executable, "-m", "llm_aai.run", "--model", "oracle", "--tasks", "01-04-03",
         "--arenas-dir", str(testbed_dir), "--out", str(out), "--run-id", "r",
         "--resolution", "64", "--oracle-budget", "3000", "--no-progress"],
        capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    episode = out / "r" / "episodes" / "01-04-03_t1"
    result = json.loads((episode / "result.json").read_text())
    assert result["passed"] and result["agent"] == "oracle"
    turns = [t for t in read_turns(episode) if t.reply]
    assert turns and turns[0].reply.startswith('Think("Oracle plan: head for the GoodGoal')
    manifest = json.loads((out / "r" / "manifest.json").read_text())
    assert manifest["agent"]["options"] == {"budget": 3000}
    replay = subprocess.run([sys.executable, "-m", "llm_aai.replay", str(episode),
                             "--resimulate"], capture_output=True, text=True, timeout=600)
    assert replay.returncode == 0, replay.stdout + replay.stderr
    assert "MATCH" in replay.stdout
