"""``python -m llm_aai.calibration``: the contact sheet of the Unity recording and our replay.

Writes one PNG with each recorded frame beside the simulated one, after every script, and
prints the largest health error and the replay's return (see ``llm_aai.calibration``).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from llm_aai.calibration.contact_sheet import build_sheet, default_recording_dir
from llm_aai.logs.store import atomic_path


def build_parser() -> argparse.ArgumentParser:
    """Build the command line."""
    parser = argparse.ArgumentParser(
        prog="python -m llm_aai.calibration",
        description="Side-by-side sheet of the Unity recording and the simulator's replay.")
    parser.add_argument("--out", required=True, type=Path, help="PNG file to write")
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
    sheet, replay = build_sheet(recording, tile=args.tile)
    with atomic_path(args.out, suffix=args.out.suffix) as draft:  # whole, or not at all
        sheet.save(draft)
    errors = [abs(s.health - s.recorded_health) for s in replay.scripts
              if s.recorded_health is not None]
    print(f"wrote {args.out}: {len(replay.scripts)} scripts, max health error "
          f"{max(errors):.3f}, return {replay.total_reward:.4f}, end {replay.end_reason}")
    return 0
