"""``python -m llm_aai.calibration``: the contact sheet of the recording beside our replay."""

from __future__ import annotations

import subprocess
import sys

import pytest
from PIL import Image, ImageFile

from llm_aai.cli import contact_sheet
from llm_aai.cli.contact_sheet import main


def test_the_sheet_pairs_every_recorded_frame_with_ours(recording_dir, tmp_path, capsys):
    out = tmp_path / "sheet.png"
    assert main(["--out", str(out), "--recording", str(recording_dir), "--tile", "32"]) == 0
    printed = capsys.readouterr().out
    assert f"wrote {out}\n42 scripts, max health error 0.0" in printed
    # 41 scripts have a recorded frame: 14 rows of 3 pairs, each pair 2 tiles + 8 px wide
    with Image.open(out) as sheet:
        assert sheet.size == (3 * (2 * 32 + 8), 14 * (32 + 18 + 8))


def test_the_module_runs_and_refuses_a_folder_that_is_not_a_recording(tmp_path):
    done = subprocess.run([sys.executable, "-m", "llm_aai.calibration", "--out",
                           str(tmp_path / "x.png"), "--recording", str(tmp_path)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "is not a recording folder" in done.stderr


def test_an_interrupted_save_leaves_the_earlier_sheet(tmp_path, monkeypatch):
    recording = tmp_path / "recording"
    recording.mkdir()
    (recording / "scripts.txt").write_text("")
    out = tmp_path / "sheet.png"
    out.write_bytes(b"the earlier sheet")
    monkeypatch.setattr(contact_sheet, "build_sheet",
                        lambda recording, tile: (Image.new("RGB", (64, 64)), None))

    def interrupt(*args, **kwargs):  # Ctrl-C after the PNG's signature and header
        raise KeyboardInterrupt

    monkeypatch.setattr(ImageFile, "_save", interrupt)
    with pytest.raises(KeyboardInterrupt):
        main(["--out", str(out), "--recording", str(recording)])
    assert out.read_bytes() == b"the earlier sheet"  # not a truncated PNG
    assert sorted(p.name for p in tmp_path.iterdir()) == ["recording", "sheet.png"]
