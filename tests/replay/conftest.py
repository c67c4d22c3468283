"""Real runs of every agent kind (heuristic, llm over HTTP, human at a pipe, replay) to replay.

Each run is made once per session with the real runner and simulator at 128 px; tests that
tamper with a log work on a copy (``copy_run``).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from llm_aai.llm.fake_server import FakeChatServer
from tests.helpers.runs import keyless_env, make_run

LLM_REPLIES = [
    'Think("The arena looks empty from here, so I will turn a little and walk forward to '
    'look for the green ball, which should be somewhere behind me or to the side.");'
    "Turn(30);Go(4);",
    "I would rather not move.",  # not a script: logged with a parse error, one no-op step
    'Think("ahead");Go(3);',
]
HUMAN_INPUT = "Turn(90);\nGo(5);\nnot a script at all\n"


def _run(testbed_dir: Path, out: Path, run_id: str, *extra: str) -> Path:
    return make_run(testbed_dir, out, run_id, "--tasks", "01-04-03", *extra, resolution=128)


@pytest.fixture(scope="session")
def runs(testbed_dir, tmp_path_factory) -> dict[str, Path]:
    """Run directories by agent kind."""
    out = tmp_path_factory.mktemp("replay-runs")
    made = {"heuristic": _run(testbed_dir, out, "heuristic", "--model", "heuristic",
                              "--tasks", "01-04-03,04-16-01")}
    made["replay"] = _run(testbed_dir, out, "replay", "--model", "replay", "--replay-from",
                          str(made["heuristic"] / "episodes" / "01-04-03_t1"))
    with pytest.MonkeyPatch.context() as patch, FakeChatServer(LLM_REPLIES) as server:
        patch.setenv("OPENAI_API_KEY", "sk-test-replay")
        made["llm"] = _run(testbed_dir, out, "llm", "--model", "openai/fake", "--api-base",
                           server.url, "--max-scripts", str(len(LLM_REPLIES)))
    env = keyless_env()
    human = subprocess.run(
        [sys.executable, "-m", "llm_aai.run", "--model", "human", "--tasks", "04-16-01",
         "--arenas-dir", str(testbed_dir), "--out", str(out), "--run-id", "human",
         "--resolution", "128", "--max-scripts", "3", "--no-progress"],
        input=HUMAN_INPUT, capture_output=True, text=True, timeout=240, env=env)
    assert human.returncode == 0, human.stderr
    made["human"] = out / "human"
    return made


@pytest.fixture
def copy_run(tmp_path):
    """Copy a run directory so a test can alter its log."""

    def copy(run_dir: Path) -> Path:
        target = tmp_path / run_dir.name
        shutil.copytree(run_dir, target)
        return target

    return copy


def episode_dirs(run_dir: Path) -> list[Path]:
    """The sealed episodes of a run."""
    return sorted(p.parent for p in (run_dir / "episodes").glob("*/result.json"))
