"""``python -m llm_aai.calibration``: the Unity recording against our replay, turn by turn.

Prints one line per turn (Unity's health and ours, and how alike the two frames are: mean
absolute difference and SSIM, ``llm_aai.calibration.similarity``), then the largest health
error and the replay's return; with ``--out``, also writes one PNG with each recorded frame
beside the simulated one.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from llm_aai.calibration.contact_sheet import build_sheet, default_recording_dir
from llm_aai.calibration.fidelity import replay_recording
from llm_aai.calibration.similarity import compare_turns, format_table
from llm_aai.logs.store import atomic_path


def build_parser() -> argparse.ArgumentParser:
    """Build the command line."""
    parser = argparse.ArgumentParser(
        prog="python -m llm_aai.calibration",
        description="The Unity recording against the simulator's replay: health and frame "
                    "similarity per turn, and optionally a side-by-side sheet.")
    parser.add_argument("--out", type=Path, default=None,
                        help="also write the side-by-side sheet to this PNG file")
    parser.add_argument("--recording", type=Path, default=None,
                        help="recording folder (default: the shared Unity tutorial recording)")
    parser.add_argument("--tile", type=int, default=256, help="pixels per frame in the sheet")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; return the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    recording = args.recording or default_recording_dir()
    if not (recording / "scripts.txt").is_file():
        parser.error(f"{recording} is not a recording folder (no scripts.txt)")
    if args.out is None:
        replay = replay_recording(recording, render=True, resolution=512)
    else:
        sheet, replay = build_sheet(recording, tile=args.tile)
        with atomic_path(args.out, suffix=args.out.suffix) as draft:  # whole, or not at all
            sheet.save(draft)
    print(format_table(compare_turns(recording, replay)))
    if args.out is not None:
        print(f"wrote {args.out}")
    errors = [abs(s.health - s.recorded_health) for s in replay.scripts
              if s.recorded_health is not None]
    print(f"{len(replay.scripts)} scripts, max health error "
          f"{max(errors, default=0.0):.3f}, return {replay.total_reward:.4f}, "
          f"end {replay.end_reason or 'none (still running after the last script)'}")
    return 0
