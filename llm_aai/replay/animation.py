"""Turn a logged episode into an animation: one frame per image the agent was shown.

Each animation frame is the logged first-person image (scaled up by a whole factor so that
small resolutions stay readable), optionally the top-down overview beside it, and a caption
panel below: the turn, the message the agent received with the image, its thoughts, the script
it sent (or why the reply did not parse) and what the script did (health, reward, events).
The frame is exactly as wide as its images (the images are enlarged until the caption has room),
so no unused strip runs down its side. On the overview, the agent's trail so far and an arrow
of its heading are drawn from the logged states, since the rendered agent is a dot a few pixels
wide. Everything comes from the log, so any agent kind (LLM, heuristic, human, replay) replays
alike.

The writers use imageio: GIF through Pillow, MP4 through the imageio-ffmpeg plugin.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from llm_aai.frames import read_frame
from llm_aai.logs.schema import TurnRecord, move_text
from llm_aai.logs.store import atomic_path
from llm_aai.replay.episode import LoggedEpisode, ReplayInputError, ShownFrame

FORMATS = (".gif", ".mp4")
MIN_TILE = 256
"""Images smaller than this are enlarged (nearest neighbour, whole factor) for legibility."""
MACRO_BLOCK = 16
"""H.264 encoders want frame sides divisible by 16; every frame is padded to a multiple."""
OVERVIEW_CENTRE = (20.0, 20.0)
OVERVIEW_SPAN = 43.0
"""The overview camera looks down on the arena's centre and spans 43 m (the arena and its
fence; ``fovy`` of the scene's visual settings in ``llm_aai/sim/looks.py``), +x right, +z up."""
TRAIL = (255, 64, 200)
ARROW = (255, 255, 255)
ARROW_EDGE = (20, 20, 20)


@dataclass(frozen=True)
class CaptionStyle:
    """Looks of the caption panel."""

    font_size: int = 15
    margin: int = 10
    line_spacing: int = 4
    min_width: int = 384
    max_lines: int = 24
    background: tuple[int, int, int] = (24, 24, 28)
    text: tuple[int, int, int] = (235, 235, 235)
    heading: tuple[int, int, int] = (255, 214, 102)
    thought: tuple[int, int, int] = (150, 200, 255)
    error: tuple[int, int, int] = (255, 120, 110)
    muted: tuple[int, int, int] = (170, 170, 170)


Line = tuple[str, str]
"""A caption paragraph: ``(colour role, text)``, the role naming a ``CaptionStyle`` colour."""


def caption(episode: LoggedEpisode, shown: ShownFrame) -> list[Line]:
    """The caption paragraphs for one shown image, from its turn record.

    The image came before the record's script, so the caption pairs what the agent saw with
    what it answered and what that answer did.
    """
    record = shown.record
    header = f"{episode.episode_id} · {episode.agent} · turn {record.turn}"
    if shown.count > 1:
        header += f" · image {shown.index + 1}/{shown.count}"
    lines: list[Line] = [("heading", header)]
    if record.sent_preamble and record.sent_preamble != "Observation captured.":
        lines.append(("muted", f"Sent before the image: {record.sent_preamble}"))
    if record.sent_text:
        lines.append(("muted", f"Sent: {record.sent_text}"))
    if record.reply is None:
        lines.extend(_ending(episode, record))
        return lines
    lines.extend(_reply(record))
    lines.append(("text", _outcome(record)))
    return lines


def _reply(record: TurnRecord) -> list[Line]:
    """Thoughts and script of a parsed reply; the raw reply and the error otherwise."""
    if record.commands is None:
        # The parser's message may add the reply with a caret under the error; with a
        # proportional font the caret would point nowhere, so keep the first line only.
        error = (record.parse_error or "unknown error").splitlines()[0]
        return [("error", f"Reply did not parse: {error}"),
                ("muted", f"Reply: {record.reply}")]
    thoughts = [str(c["arg"]) for c in record.commands if c.get("op") == "Think"]
    lines: list[Line] = [("thought", f"Think: {text}") for text in thoughts]
    moves = [move_text(c) for c in record.commands if c.get("op") != "Think"]
    if any(c.get("op") == "Act" for c in record.commands):  # --control action
        lines.append(("text", "Action: " + "; ".join(moves)))
    else:
        lines.append(("text", "Script: " + ("; ".join(moves) + ";" if moves else "(no moves)")))
    if record.normalizations:
        lines.append(("muted", "Normalised: " + "; ".join(record.normalizations)))
    return lines


def _outcome(record: TurnRecord) -> str:
    """What the script did: steps, health after, reward, events, the end."""
    text = (f"After {record.steps} step{'' if record.steps == 1 else 's'}: "
            f"health {record.health:.2f}, "
            f"reward {record.reward:+.4f}")
    if record.events:
        text += ", events " + ", ".join(
            f"{event.get('kind')} {float(event.get('reward', 0.0)):+.3g}"
            for event in record.events)
    if record.terminated:
        text += ", episode ended"
    return text


def _ending(episode: LoggedEpisode, record: TurnRecord) -> list[Line]:
    """The closing frame: how the episode ended."""
    lines: list[Line] = []
    if record.steps:
        lines.append(("muted", f"Clock run out with {record.steps} no-op steps "
                               f"(reward {record.reward:+.4f})"))
    result = episode.result
    if result is None:
        lines.append(("error", f"Episode unfinished; health {record.health:.2f}"))
        return lines
    verdict = "PASSED" if result.passed else "FAILED"
    lines.append(("heading", f"{verdict}: {result.end_reason}, total reward {result.reward:.4f} "
                             f"(pass mark {result.pass_mark:g}), final health "
                             f"{result.final_health:.2f}"))
    lines.append(("muted", f"{result.scripts_used} scripts ({result.invalid_replies} invalid), "
                           f"{result.steps} steps"))
    return lines


def render_frames(
    episode: LoggedEpisode,
    *,
    overviews: Mapping[tuple[int, int], np.ndarray] | None = None,
    style: CaptionStyle = CaptionStyle(),
) -> list[np.ndarray]:
    """Compose every animation frame of the episode, all the same size.

    Args:
        episode: the logged episode.
        overviews: top-down views by ``(turn, index)`` (``Resimulation.overviews``); each
            shown image must have one. The agent's trail and heading are drawn on them.
        style: caption looks.

    Raises:
        ReplayInputError: a logged frame is missing or unreadable, or an overview is missing.

    """
    shown = episode.shown_frames()
    if not shown:
        raise ReplayInputError(f"{episode.directory}: the log holds no frames")
    images = [_read(frame.path) for frame in shown]
    panels = None
    if overviews is not None:
        missing = [(f.turn, f.index) for f in shown if (f.turn, f.index) not in overviews]
        if missing:
            raise ReplayInputError(f"no overview for shown frame(s) {missing[:3]}")
        panels = [overviews[(f.turn, f.index)] for f in shown]
    side = images[0].shape[0]
    scale = _scale(side, 2 if panels else 1, style.min_width)
    tile = side * scale
    width = tile * (2 if panels else 1)
    font = _font(style.font_size)
    wrapped = [_wrap(caption(episode, f), font, width - 2 * style.margin, style.max_lines)
               for f in shown]
    line_height = _line_height(font) + style.line_spacing
    text_height = max(len(lines) for lines in wrapped) * line_height + 2 * style.margin
    size = (_round_up(width), _round_up(tile + text_height))
    poses = _poses(episode, shown)
    return [
        _compose(image, scale, None if panels is None else
                 _mark_agent(panels[i], tile, poses[: i + 1]), lines, size, tile, font,
                 line_height, style)
        for i, (image, lines) in enumerate(zip(images, wrapped, strict=True))
    ]


def tile_size(episode: LoggedEpisode, *, overview: bool = False,
              style: CaptionStyle = CaptionStyle()) -> int:
    """Side of the image tiles of the episode's animation (ask overviews of this size)."""
    shown = episode.shown_frames()
    if not shown:
        raise ReplayInputError(f"{episode.directory}: the log holds no frames")
    side = _read(shown[0].path).shape[0]
    return side * _scale(side, 2 if overview else 1, style.min_width)


def _scale(side: int, panels: int, min_width: int) -> int:
    """Enlarge small images to ``MIN_TILE`` and until the panels fill the caption's width."""
    return max(1, -(-MIN_TILE // side), -(-min_width // (panels * side)))


Pose = tuple[float, float, float] | None
"""Where the agent was when an image was taken: Unity (x, z) and yaw; None if not logged."""


def _poses(episode: LoggedEpisode, shown: Sequence[ShownFrame]) -> list[Pose]:
    """The agent's pose at each shown image: after the turn before the one that sent it.

    Turn ``k`` sends the images taken after script ``k - 1``, so its pose is the state
    logged with turn ``k - 1`` (the start record for turn 1's initial observations).
    """
    after: dict[int, Pose] = {}
    for record in ([episode.start] if episode.start is not None else []) + list(episode.turns):
        state = record.state or {}
        position, yaw = state.get("position"), state.get("yaw")
        if position is not None and yaw is not None and len(position) == 3:
            after[record.turn] = (float(position[0]), float(position[2]), float(yaw))
    return [after.get(frame.turn - 1) for frame in shown]


def _pixel(x: float, z: float, size: int) -> tuple[float, float]:
    """Overview pixel of the Unity floor point (x, z)."""
    half = OVERVIEW_SPAN / 2
    return ((x - OVERVIEW_CENTRE[0] + half) / OVERVIEW_SPAN * size,
            (OVERVIEW_CENTRE[1] + half - z) / OVERVIEW_SPAN * size)


def _mark_agent(overview: np.ndarray, tile: int, poses: Sequence[Pose]) -> np.ndarray:
    """The overview at tile size with the trail so far and an arrow of the current heading."""
    view = Image.fromarray(np.asarray(overview)).convert("RGB")
    if view.size != (tile, tile):
        view = view.resize((tile, tile), Image.Resampling.LANCZOS)
    known = [pose for pose in poses if pose is not None]
    if not known:
        return np.asarray(view)
    draw = ImageDraw.Draw(view)
    points = [_pixel(x, z, tile) for x, z, _ in known]
    width = max(2, tile // 160)
    if len(points) > 1:
        draw.line(points, fill=TRAIL, width=width, joint="curve")
    if poses[-1] is not None:
        draw.polygon(_arrow(*poses[-1], tile), fill=ARROW, outline=ARROW_EDGE,
                     width=max(1, width // 2))
    return np.asarray(view)


def _arrow(x: float, z: float, yaw: float, size: int) -> list[tuple[float, float]]:
    """A triangle from the agent's centre pointing where it faces (2 m long)."""
    theta = math.radians(yaw)
    dx, dz = math.sin(theta), math.cos(theta)
    tip = (x + 2.0 * dx, z + 2.0 * dz)
    back = (x - 0.5 * dx, z - 0.5 * dz)
    left = (back[0] - 0.7 * dz, back[1] + 0.7 * dx)
    right = (back[0] + 0.7 * dz, back[1] - 0.7 * dx)
    return [_pixel(px, pz, size) for px, pz in (tip, left, right)]


def write_animation(frames: Sequence[np.ndarray], path: str | Path, fps: float = 1.0) -> Path:
    """Write frames as a GIF or an MP4 (by the file's extension); returns the path.

    The file appears whole or not at all (an existing one stays as it was until then).

    Raises:
        ValueError: unknown extension, no frames or a non-positive fps.

    """
    import imageio.v2 as imageio

    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise ValueError(f"{path}: animation format must be one of {', '.join(FORMATS)}")
    if not frames:
        raise ValueError("no frames to write")
    if not fps > 0:
        raise ValueError(f"fps must be positive, got {fps}")
    if suffix == ".mp4":
        _require_ffmpeg()
    # written beside the path, then put in its place: an interrupted encoder leaves the old
    # file (or none), never a truncated one that looks whole
    with atomic_path(path, suffix=suffix) as draft:
        if suffix == ".gif":
            # Pillow's GIF writer takes the frame duration in milliseconds; loop=0 repeats.
            imageio.mimsave(draft, list(frames), format="GIF", duration=1000.0 / fps, loop=0)
        else:
            writer = imageio.get_writer(draft, format="FFMPEG", mode="I", fps=fps,
                                        codec="libx264", pixelformat="yuv420p",
                                        macro_block_size=MACRO_BLOCK)
            try:
                for frame in frames:
                    writer.append_data(np.asarray(frame))
            finally:  # on an error too (its ``with`` would not): ffmpeg is done with the
                writer.close()  # draft before it is removed, not writing it again after
    return path


def _require_ffmpeg() -> None:
    try:
        import imageio_ffmpeg  # noqa: F401
    except ImportError as error:
        raise ValueError("writing .mp4 needs the imageio-ffmpeg package "
                         "(pip install imageio-ffmpeg), or write a .gif") from error


def _read(path: Path) -> np.ndarray:
    try:
        return read_frame(path)
    except (OSError, ValueError) as error:
        raise ReplayInputError(f"{path}: cannot read the logged frame: {error}") from error


def _compose(image: np.ndarray, scale: int, overview: np.ndarray | None,
             lines: list[Line], size: tuple[int, int], tile: int, font, line_height: int,
             style: CaptionStyle) -> np.ndarray:
    canvas = Image.new("RGB", size, style.background)
    big = Image.fromarray(image).resize((tile, tile), Image.Resampling.NEAREST)
    canvas.paste(big, (0, 0))
    if overview is not None:
        canvas.paste(Image.fromarray(overview), (tile, 0))
    draw = ImageDraw.Draw(canvas)
    y = tile + style.margin
    for role, text in lines:
        draw.text((style.margin, y), text, font=font, fill=getattr(style, role))
        y += line_height
    return np.asarray(canvas)


def _wrap(lines: list[Line], font, width: int, max_lines: int) -> list[Line]:
    """Word-wrap each paragraph to ``width`` pixels; cut the caption at ``max_lines``."""
    out: list[Line] = []
    for role, text in lines:
        for paragraph in text.splitlines() or [""]:
            out.extend((role, row) for row in _wrap_paragraph(paragraph, font, width))
    if len(out) > max_lines:
        role, text = out[max_lines - 1]
        out = out[: max_lines - 1] + [(role, _with_ellipsis(text, font, width))]
    return out


def _wrap_paragraph(text: str, font, width: int) -> list[str]:
    rows: list[str] = []
    current = ""
    for word in text.split(" "):
        candidate = f"{current} {word}" if current else word
        if font.getlength(candidate) <= width:
            current = candidate
            continue
        if current:
            rows.append(current)
        while font.getlength(word) > width:  # a word wider than the panel: hard-break it
            cut = _longest_prefix(word, font, width)
            rows.append(word[:cut])
            word = word[cut:]
        current = word
    rows.append(current)
    return rows


def _longest_prefix(word: str, font, width: int) -> int:
    cut = 1
    while cut < len(word) and font.getlength(word[: cut + 1]) <= width:
        cut += 1
    return cut


def _with_ellipsis(text: str, font, width: int) -> str:
    """``text …``, shortened until it fits: marks a caption cut at ``max_lines``."""
    while text and font.getlength(text + " …") > width:
        text = text[:-1]
    return text + " …"


@cache
def _font(size: int):
    """Pillow's bundled scalable font (needs FreeType, which Pillow wheels include)."""
    return ImageFont.load_default(size=size)


def _line_height(font) -> int:
    top, bottom = font.getbbox("Ágjy|")[1::2]
    return int(bottom - top)


def _round_up(value: int) -> int:
    return -(-value // MACRO_BLOCK) * MACRO_BLOCK
