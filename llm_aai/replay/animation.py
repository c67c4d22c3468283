"""Turn a logged episode into an animation: one frame per image the agent was shown.

Each animation frame is the logged first-person image (scaled up by a whole factor so that
small resolutions stay readable), optionally the top-down overview beside it, and a caption
panel below: the turn, the message the agent received with the image, its thoughts, the script
it sent (or why the reply did not parse) and what the script did (health, reward, events).
Everything comes from the log, so any agent kind (LLM, heuristic, human, replay) replays alike.

The writers use imageio: GIF through Pillow, MP4 through the imageio-ffmpeg plugin.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from llm_aai.frames import read_frame
from llm_aai.logs.schema import TurnRecord
from llm_aai.replay.episode import LoggedEpisode, ReplayInputError, ShownFrame

FORMATS = (".gif", ".mp4")
MIN_TILE = 256
"""Images smaller than this are enlarged (nearest neighbour, whole factor) for legibility."""
MACRO_BLOCK = 16
"""H.264 encoders want frame sides divisible by 16; every frame is padded to a multiple."""


@dataclass(frozen=True)
class CaptionStyle:
    """Looks of the caption panel."""

    font_size: int = 15
    margin: int = 10
    line_spacing: int = 4
    min_width: int = 640
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
    moves = [f"{c['op']}({c['arg']})" for c in record.commands if c.get("op") != "Think"]
    lines: list[Line] = [("thought", f"Think: {text}") for text in thoughts]
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
            shown image must have one.
        style: caption looks.

    Raises:
        ReplayInputError: a logged frame is missing or unreadable, or an overview is missing.

    """
    shown = episode.shown_frames()
    if not shown:
        raise ReplayInputError(f"{episode.directory}: the log holds no frames")
    images = [_read(frame.path) for frame in shown]
    side = images[0].shape[0]
    scale = _scale(side)
    panels = None
    if overviews is not None:
        missing = [(f.turn, f.index) for f in shown if (f.turn, f.index) not in overviews]
        if missing:
            raise ReplayInputError(f"no overview for shown frame(s) {missing[:3]}")
        panels = [overviews[(f.turn, f.index)] for f in shown]
    tile = side * scale
    width = max(style.min_width, tile * (2 if panels else 1))
    font = _font(style.font_size)
    wrapped = [_wrap(caption(episode, f), font, width - 2 * style.margin, style.max_lines)
               for f in shown]
    line_height = _line_height(font) + style.line_spacing
    text_height = max(len(lines) for lines in wrapped) * line_height + 2 * style.margin
    size = (_round_up(width), _round_up(tile + text_height))
    return [
        _compose(image, scale, None if panels is None else panels[i], lines, size, tile,
                 font, line_height, style)
        for i, (image, lines) in enumerate(zip(images, wrapped, strict=True))
    ]


def tile_size(episode: LoggedEpisode) -> int:
    """Side of the image tiles of the episode's animation (ask overviews of this size)."""
    shown = episode.shown_frames()
    if not shown:
        raise ReplayInputError(f"{episode.directory}: the log holds no frames")
    side = _read(shown[0].path).shape[0]
    return side * _scale(side)


def _scale(side: int) -> int:
    return max(1, -(-MIN_TILE // side))


def write_animation(frames: Sequence[np.ndarray], path: str | Path, fps: float = 1.0) -> Path:
    """Write frames as a GIF or an MP4 (by the file's extension); returns the path.

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
    path.parent.mkdir(parents=True, exist_ok=True)
    if suffix == ".gif":
        # Pillow's GIF writer takes the frame duration in milliseconds; loop=0 repeats forever.
        imageio.mimsave(path, list(frames), format="GIF", duration=1000.0 / fps, loop=0)
    else:
        _require_ffmpeg()
        with imageio.get_writer(path, format="FFMPEG", mode="I", fps=fps, codec="libx264",
                                pixelformat="yuv420p", macro_block_size=MACRO_BLOCK) as writer:
            for frame in frames:
                writer.append_data(np.asarray(frame))
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
        view = Image.fromarray(np.asarray(overview))
        if view.size != (tile, tile):
            view = view.resize((tile, tile), Image.Resampling.LANCZOS)
        canvas.paste(view, (tile, 0))
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
