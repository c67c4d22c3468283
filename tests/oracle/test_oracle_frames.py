"""The oracle in action control, ``--model oracle-frames`` and ``--physics-build`` through the
real runner, logs and re-simulation."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from llm_aai.agents import resolve_agent
from llm_aai.logs import read_turns
from llm_aai.protocol.action_control import ActionControl
from llm_aai.runner import RunConfig, start_run
from llm_aai.settings import ConfigError, read_settings


def run(*args, timeout=600):
    return subprocess.run([sys.executable, "-m", "llm_aai.run", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout)


def resimulate(episode):
    return subprocess.run([sys.executable, "-m", "llm_aai.replay", str(episode),
                           "--resimulate"], capture_output=True, text=True, timeout=600)


def test_oracle_frames_is_registered_and_refuses_script_control():
    agent = resolve_agent("oracle-frames", budget=50).create()
    assert agent.name == "oracle-frames" and agent.per_frame and agent.control == "action"
    with pytest.raises(ValueError, match="plays --control action only"):
        resolve_agent("oracle-frames", budget=50, control="script").create()


def test_oracle_frames_passes_a_task_reply_by_reply_and_replays_exactly(testbed_dir, tmp_path):
    out = tmp_path / "runs"
    done = run("--model", "oracle-frames", "--tasks", "01-04-03", "--arenas-dir", testbed_dir,
               "--out", out, "--run-id", "r", "--resolution", "64", "--oracle-budget", "3000",
               "--no-progress")
    assert done.returncode == 0, done.stderr
    config = read_settings(out / "r").config
    assert config.modes.control == "action"
    assert config.protocol.max_scripts is None  # no script cap
    assert config.protocol.max_replies == 2000  # the preset's guard
    episode = out / "r" / "episodes" / "01-04-03_t1"
    result = json.loads((episode / "result.json").read_text())
    assert result["passed"] and result["agent"] == "oracle-frames"
    replies = [t.reply for t in read_turns(episode) if t.reply]
    control = ActionControl()
    decisions = [control.decide(reply) for reply in replies]
    assert all(not d.refused and 1 <= len(d.actions) <= 4 for d in decisions)
    assert replies[0].startswith('Think("Oracle plan: head for the GoodGoal')
    check = resimulate(episode)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "verdict: MATCH" in check.stdout


def test_oracle_frames_refuses_a_script_cap_or_script_control(tmp_path, capsys):
    for flags, says in ((["--max-scripts", "5"], "no script cap"),
                        (["--control", "script", "--max-scripts", "5"], "no script cap")):
        done = run("--model", "oracle-frames", "--tasks", "01-04-03", "--out", tmp_path,
                   *flags)
        assert done.returncode == 2 and says in done.stderr, done.stderr
    assert not any(tmp_path.iterdir())


def test_a_library_run_of_oracle_frames_needs_frame_control(testbed_dir, tmp_path):
    with pytest.raises(ConfigError, match="model oracle-frames acts per step"):
        start_run(RunConfig(model="oracle-frames", tasks="01-04-03", arenas_dir=testbed_dir),
                  out=tmp_path, show_progress=False)
    assert not any(tmp_path.iterdir())


@pytest.mark.slow
@pytest.mark.parametrize(("build", "passed"), [("3.x", False), ("2019", True)])
def test_the_physics_build_is_recorded_and_replayed(testbed_dir, tmp_path, build, passed):
    """08-30-01's bounce ball comes back within reach only with the 2019 build's bounce
    material: the oracle passes it only there, and the re-simulation, which reads the build
    from the manifest, matches the log in both."""
    out = tmp_path / "runs"
    done = run("--model", "oracle", "--tasks", "08-30-01", "--arenas-dir", testbed_dir,
               "--out", out, "--run-id", "r", "--resolution", "64", "--oracle-budget", "1500",
               "--physics-build", build, "--no-progress")
    assert done.returncode == 0, done.stderr
    assert read_settings(out / "r").config.physics_build == build
    episode = out / "r" / "episodes" / "08-30-01_t1"
    assert json.loads((episode / "result.json").read_text())["passed"] is passed
    check = resimulate(episode)
    assert "verdict: MATCH" in check.stdout, check.stdout + check.stderr


def test_a_physics_build_is_refused_with_the_unity_backend(testbed_dir, tmp_path):
    done = run("--model", "heuristic", "--tasks", "01-04-03", "--arenas-dir", testbed_dir,
               "--backend", "unity",
               "--physics-build", "2019", "--out", tmp_path)
    assert done.returncode == 2
    assert "--physics-build 2019 chooses the embedded simulator's physics" in done.stderr
    assert not any(tmp_path.iterdir())
