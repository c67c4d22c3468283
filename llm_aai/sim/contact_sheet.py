"""Side-by-side sheet of the Unity recording and the simulator's replay, one row per script.

Usage (from the repository root)::

    python -m llm_aai.sim.contact_sheet --out /tmp/contact_sheet.png

Each row shows the recorded frame (left) and the simulated frame (right) after one script,
labelled with the script and both health values, so a person can judge at a glance whether
the simulator looks and moves like Animal-AI.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from llm_aai.sim.fidelity import read_recorded_frame, replay_recording

_LABEL_HEIGHT = 18


def default_recording_dir() -> Path:
    """The shared recording: ``$LLM_AAI_SHARED`` or ``../shared`` next to the repository."""
    shared = os.environ.get("LLM_AAI_SHARED")
    base = Path(shared) if shared else Path(__file__).resolve().parents[3] / "shared"
    return base / "fixtures" / "unity-tutorial-recording"


def build_sheet(recording_dir: Path, tile: int = 256, columns: int = 3):
    """Replay the recording with rendering on and return the sheet as a PIL image."""
    from PIL import Image, ImageDraw

    replay = replay_recording(recording_dir, render=True, resolution=512)
    cells = []
    for script in replay.scripts:
        if script.frame is None or script.recorded_frame is None:
            continue
        recorded = Image.fromarray(read_recorded_frame(recording_dir, script.recorded_frame))
        pair = Image.new("RGB", (2 * tile, tile + _LABEL_HEIGHT), "white")
        pair.paste(recorded.resize((tile, tile)), (0, _LABEL_HEIGHT))
        pair.paste(Image.fromarray(script.frame).resize((tile, tile)), (tile, _LABEL_HEIGHT))
        command = script.text.split(";")[-2].strip() if ";" in script.text else script.text
        label = (f"#{script.index} {command}  health rec {script.recorded_health} "
                 f"sim {script.health:.2f}")
        ImageDraw.Draw(pair).text((4, 3), label, fill="black")
        cells.append(pair)
    rows = (len(cells) + columns - 1) // columns
    cell_w, cell_h = 2 * tile + 8, tile + _LABEL_HEIGHT + 8
    sheet = Image.new("RGB", (columns * cell_w, max(rows, 1) * cell_h), (90, 90, 90))
    for k, cell in enumerate(cells):
        sheet.paste(cell, ((k % columns) * cell_w, (k // columns) * cell_h))
    return sheet, replay


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=Path, help="PNG file to write")
    parser.add_argument("--recording", type=Path, default=None,
                        help="recording folder (default: the shared Unity tutorial recording)")
    parser.add_argument("--tile", type=int, default=256, help="pixels per frame in the sheet")
    args = parser.parse_args(argv)
    recording = args.recording or default_recording_dir()
    if not (recording / "scripts.txt").is_file():
        parser.error(f"{recording} is not a recording folder (no scripts.txt)")
    sheet, replay = build_sheet(recording, tile=args.tile)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    sheet.save(args.out)
    errors = [abs(s.health - s.recorded_health) for s in replay.scripts
              if s.recorded_health is not None]
    print(f"wrote {args.out}: {len(replay.scripts)} scripts, max health error "
          f"{max(errors):.3f}, return {replay.total_reward:.4f}, end {replay.end_reason}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
