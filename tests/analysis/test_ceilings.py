"""``analyze`` draws the oracle's two ceilings from real runs beside children and Olympics."""

from __future__ import annotations

import subprocess
import sys

import pytest

from llm_aai.cli.analyze import main as analyze


@pytest.mark.slow
def test_oracle_and_oracle_frames_are_drawn_as_ceilings(testbed_dir, tmp_path, capsys):
    out = tmp_path / "runs"
    for model in ("oracle", "oracle-frames"):
        done = subprocess.run(
            [sys.executable, "-m", "llm_aai.run", "--model", model, "--tasks",
             "01-04-03,02-02-01", "--arenas-dir", str(testbed_dir), "--out", str(out),
             "--run-id", model, "--resolution", "64", "--oracle-budget", "2000",
             "--no-progress"], capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
    figure = tmp_path / "ceilings.svg"
    assert analyze([str(out / "oracle"), str(out / "oracle-frames"), "--plot",
                    str(figure)]) == 0
    text = figure.read_text()
    assert "oracle: ceiling (privileged search in the simulator)" in text
    assert "oracle-frames (action control): ceiling (privileged search in the simulator)" in text
    assert text.count("stroke-dasharray") >= 2  # two line styles, one per ceiling
    assert "Children 6-10" in text and "Olympics 2019 top 10" in text
    table = capsys.readouterr().out
    assert "oracle-frames (action control)" in table
