"""Real runs made through the run command, for tests that read, replay or view them."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

from llm_aai.arena import ARENAS_ENV
from llm_aai.cli.run import main as run_main

__all__ = ["audit_rows", "call_costs", "keyless_env", "make_run", "run_module"]


def make_run(testbed_dir: Path, out: Path, run_id: str, *flags: str,
             resolution: int = 64, arenas_from_env: bool = False) -> Path:
    """Run ``python -m llm_aai.run`` in this process with ``flags``; the run's folder.

    The testbed, the output folder, the run id, the frame size and no progress bar are
    given here; ``flags`` add the model, the tasks and the rest. ``arenas_from_env`` gives the
    testbed as ``$LLM_AAI_ARENAS`` (for the call only) instead of ``--arenas-dir``.
    """
    argv = ["--out", str(out), "--run-id", run_id, "--resolution", str(resolution),
            "--no-progress", *flags]
    if not arenas_from_env:
        assert run_main(["--arenas-dir", str(testbed_dir), *argv]) == 0
        return Path(out) / run_id
    before = os.environ.get(ARENAS_ENV)
    os.environ[ARENAS_ENV] = str(testbed_dir)
    try:
        assert run_main(argv) == 0
    finally:
        if before is None:
            del os.environ[ARENAS_ENV]
        else:
            os.environ[ARENAS_ENV] = before
    return Path(out) / run_id


def keyless_env() -> dict[str, str]:
    """This process's environment without any provider's API key (a subprocess sees none)."""
    return {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}


def run_module(module: str, *args, timeout: float = 600, **kwargs) -> subprocess.CompletedProcess:
    """Run ``python -m module args`` to its end, its output captured as text."""
    return subprocess.run([sys.executable, "-m", module, *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, **kwargs)


def audit_rows(out: Path) -> list[dict[str, str]]:
    """The rows of an audit folder's ``audit.csv``, as its CSV reader gives them."""
    with (Path(out) / "audit.csv").open(newline="") as handle:
        return list(csv.DictReader(handle))


def call_costs(run_dir: Path) -> list[float]:
    """The dollars of every priced model call a run's turn logs record, episode by episode."""
    costs = []
    for turns in sorted(Path(run_dir).glob("episodes/*/turns.jsonl")):
        for line in turns.read_text().splitlines():
            usage = json.loads(line).get("usage") or {}
            if usage.get("cost_usd"):
                costs.append(usage["cost_usd"])
    return costs
