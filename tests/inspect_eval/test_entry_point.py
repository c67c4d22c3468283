"""`inspect eval llm_aai/testbed` finds the task through pyproject's entry point."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from llm_aai.logs.store import read_manifest, read_result

REPO = Path(__file__).resolve().parents[2]


def _entry_point_site(folder: Path) -> Path:
    """A folder declaring pyproject's inspect_ai entry point, as an installed package would."""
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["entry-points"]
    info = folder / "llm_aai_entry_point-0.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: llm-aai-entry-point\n"
                                   "Version: 0.0\n")
    lines = [f"{name} = {target}" for name, target in declared["inspect_ai"].items()]
    (info / "entry_points.txt").write_text("[inspect_ai]\n" + "\n".join(lines) + "\n")
    return folder


@pytest.mark.slow  # a subprocess or the animalai client: ~10-20 s
def test_inspect_eval_runs_the_registered_task(testbed_dir, tmp_path):
    site = _entry_point_site(tmp_path / "site")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(REPO), str(site), os.environ.get("PYTHONPATH", "")])}
    run_dir = tmp_path / "run"
    inspect = Path(sys.executable).parent / "inspect"
    done = subprocess.run(
        [str(inspect), "eval", "llm_aai/testbed", "--model", "mockllm/model",
         "-T", "tasks=01-04-03", "-T", f"arenas_dir={testbed_dir}", "-T", "resolution=64",
         "-T", "max_scripts=2", "-T", f"run_dir={run_dir}", "--log-dir", str(tmp_path / "logs"),
         "--log-format", "json", "--display", "none"],
        capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    # mockllm's default reply is no script: two refused replies, then the clock runs out
    result = read_result(run_dir / "episodes" / "01-04-03_t1")
    assert (result.scripts_used, result.invalid_replies, result.agent) == (2, 2, "mockllm/model")
    assert read_manifest(run_dir).agent["kind"] == "inspect"
    (log_file,) = (tmp_path / "logs").glob("*.json")
    log = json.loads(log_file.read_text())
    assert log["eval"]["task"] == "llm_aai/testbed" and log["status"] == "success"


def _offline(tmp_path: Path) -> dict[str, str]:
    """An empty tiktoken cache and no way out: every HTTPS request goes to a closed port."""
    (tmp_path / "empty-cache").mkdir()
    env = {key: value for key, value in os.environ.items() if "proxy" not in key.lower()}
    return {**env, "TIKTOKEN_CACHE_DIR": str(tmp_path / "empty-cache"),
            "HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9"}


@pytest.mark.slow  # a subprocess: ~10-20 s
def test_inspect_eval_offline_without_tiktoken_s_encoding_says_what_to_set(testbed_dir,
                                                                            tmp_path):
    """Was an 80-line traceback about a download, and exit status 0."""
    site = _entry_point_site(tmp_path / "site")
    env = {**_offline(tmp_path), "PYTHONPATH": os.pathsep.join(
        [str(REPO), str(site), os.environ.get("PYTHONPATH", "")])}
    inspect = Path(sys.executable).parent / "inspect"
    done = subprocess.run(
        [str(inspect), "eval", "llm_aai/testbed", "--model", "mockllm/model",
         "-T", "tasks=01-04-03", "-T", f"arenas_dir={testbed_dir}", "-T", "resolution=64",
         "-T", "max_scripts=1", "-T", f"run_dir={tmp_path / 'run'}",
         "--log-dir", str(tmp_path / "logs"), "--display", "plain"],
        capture_output=True, text=True, env=env, timeout=600)
    said = " ".join((done.stdout + done.stderr).split())  # Inspect wraps its lines
    assert done.returncode == 1, said[-3000:]
    assert "Traceback" not in said and len((done.stdout + done.stderr).splitlines()) < 25
    assert ("Inspect counts tokens with tiktoken, which could not load its encoding from "
            f"{tmp_path / 'empty-cache'} nor download it") in said
    tokenizers = str(Path(litellm_spec_origin()).parent / "litellm_core_utils" / "tokenizers")
    unwrapped = "".join(said.split())  # Inspect breaks a long path in the middle too
    assert f"setTIKTOKEN_CACHE_DIR={tokenizers}(theencodingslitellmships)" in unwrapped
    assert not (tmp_path / "run").exists()


def litellm_spec_origin() -> str:
    import importlib.util

    return importlib.util.find_spec("litellm").origin
