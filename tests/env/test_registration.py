"""``import llm_aai`` registers the gymnasium id, and the documented gymnasium example runs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

GYMNASIUM_PAGE = Path(__file__).resolve().parents[2] / "docs" / "gymnasium.md"


def _python(code: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, env={**os.environ, **env})


def test_import_llm_aai_registers_the_id_loading_only_gymnasium():
    done = _python(
        "import sys, gymnasium, llm_aai\n"
        "print('llm_aai/AnimalAI-v0' in gymnasium.registry)\n"
        "print(sorted(m for m in sys.modules if m.startswith('llm_aai')))\n"
        "print('mujoco' in sys.modules)\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:3] == [
        "True", "['llm_aai', 'llm_aai.registration']", "False"]


def test_the_documented_gymnasium_example_runs(testbed_dir):
    example = re.search(r"```python\n(.*?)```", GYMNASIUM_PAGE.read_text(), re.S).group(1)
    check = ("\nassert env.observation_space['image'].shape == (128, 128, 3)\n"
             "assert observation['image'].shape == (128, 128, 3)\n"
             "assert observation['health'].shape == (1,)\n"
             "assert list(env.action_space.nvec) == [3, 3]\n"
             "assert top_down.shape == (512, 512, 3)\n"
             "print('ran')\n")
    done = _python(example + check, LLM_AAI_ARENAS=str(testbed_dir))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("ran")
