"""``python -m llm_aai.replay``: animate a logged episode and check it re-simulates exactly.

Exit status: 0 when done (and, with ``--resimulate``, everything matched the log), 1 when the
re-simulation differs from the log, 2 on bad input (not an episode, a wrong arena file, a run
that was not on the embedded simulator, an unknown output format).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from llm_aai.replay import (
    FORMATS,
    ReplayInputError,
    load_episode,
    render_frames,
    resimulate,
    tile_size,
    write_animation,
)
from llm_aai.replay.pace import per_action, pick_fps


def build_parser() -> argparse.ArgumentParser:
    """Build the command line."""
    parser = argparse.ArgumentParser(
        prog="python -m llm_aai.replay",
        description="Animate a logged episode (one frame per image the agent was shown, "
                    "captioned with turn, thoughts, script and health) and/or re-execute its "
                    "logged actions in the embedded simulator to check the log.",
    )
    parser.add_argument("episode", type=Path, metavar="EPISODE_DIR",
                        help="an episode directory: <run>/episodes/<task>_t<trial>")
    parser.add_argument("--out", type=Path, metavar="FILE",
                        help="animation to write, .gif or .mp4 (default: <episode-id>.gif in "
                             "the current directory; with --resimulate, none unless given)")
    parser.add_argument("--resimulate", action="store_true",
                        help="re-execute the logged actions in the embedded simulator and "
                             "compare health, reward, state and frames with the log, per turn")
    parser.add_argument("--overview", action="store_true",
                        help="put the simulator's top-down view beside each frame "
                             "(re-simulates the episode; embedded runs only)")
    parser.add_argument("--fps", type=float, default=None,
                        help="animation frames per second (default: chosen from the episode: "
                             "1 for a script episode, up to 60 s long; a per-action episode "
                             "aims at about 15 s, 2 to 12 fps; e.g. 4 to skim)")
    parser.add_argument("--arenas-dir", type=Path, metavar="DIR",
                        help="where to find the arena for re-simulation (default: where the run "
                             "found it, its --arenas-dir or the folder its manifest records, "
                             "else $LLM_AAI_ARENAS or the testbed cache)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command; returns the exit status."""
    args = build_parser().parse_args(argv)
    if args.out is not None and args.out.suffix.lower() not in FORMATS:
        return _fail(f"{args.out}: animation format must be one of {', '.join(FORMATS)}")
    if args.fps is not None and not args.fps > 0:
        return _fail(f"--fps must be positive, got {args.fps}")
    out = args.out
    if out is None and not args.resimulate:
        out = Path(f"{args.episode.resolve().name}.gif")
    try:
        episode = load_episode(args.episode)
        if episode.cut is not None:
            print(f"warning: {episode.cut.message}; replaying the intact turns", file=sys.stderr)
        report = _resimulate(episode, args) if args.resimulate or args.overview else None
        if out is not None:
            _animate(episode, report, out, args.fps)
    except ReplayInputError as error:
        return _fail(str(error))
    except OSError as error:
        return _fail(f"cannot write {out}: {error}")
    return 1 if report is not None and args.resimulate and not report.ok else 0


def _resimulate(episode, args):
    size = min(tile_size(episode, overview=True), 1024) if args.overview else None
    report = resimulate(episode, arenas_dir=args.arenas_dir, overview_size=size)
    if args.resimulate:
        print(report.render())
    elif not report.ok:
        print(f"warning: the re-simulation differs from the log, so the overviews show the "
              f"simulated run, not the logged one ({report.verdict()})", file=sys.stderr)
    return report


def _animate(episode, report, out: Path, fps: float | None) -> None:
    overviews = report.overviews if report is not None and report.overviews else None
    frames = render_frames(episode, overviews=overviews)
    chosen = ""
    if fps is None:
        action = per_action(episode)
        fps = pick_fps(len(frames), action=action)
        chosen = (f" (chosen for {'a per-action' if action else 'a script'} episode; "
                  "--fps to change)")
    write_animation(frames, out, fps=fps)
    height, width = frames[0].shape[:2]
    print(f"wrote {out}: {len(frames)} frames of {width}x{height} at {fps:g} fps{chosen}, "
          f"{len(frames) / fps:.0f} s, {out.stat().st_size:,} bytes")


def _fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2
