"""Animations: one captioned frame per shown image, written as GIF and MP4 and read back."""

from __future__ import annotations

import dataclasses
import itertools
import json
import math

import imageio.v3 as iio
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import GifImagePlugin, Image

from llm_aai.cli.replay import main
from llm_aai.replay import (
    CaptionStyle,
    caption,
    load_episode,
    render_frames,
    resimulate,
    tile_size,
    write_animation,
)
from llm_aai.replay.animation import ARROW, TRAIL, _font, _pixel, _wrap_paragraph

from .conftest import episode_dirs


def _logged(frame):
    with Image.open(frame.path) as handle:
        return np.asarray(handle.convert("RGB"))


@pytest.mark.parametrize("kind", ("heuristic", "replay", "llm", "human"))
def test_every_agent_kind_animates_with_the_logged_images(runs, kind):
    for directory in episode_dirs(runs[kind]):
        episode = load_episode(directory)
        shown = episode.shown_frames()
        frames = render_frames(episode)
        assert len(frames) == len(shown) == sum(len(t.sent_images) for t in episode.turns)
        assert len({f.shape for f in frames}) == 1
        height, width = frames[0].shape[:2]
        assert height % 16 == 0 and width % 16 == 0
        tile = tile_size(episode)
        assert tile == 384  # 128 px runs are tripled, so the caption has room beneath
        assert width == tile  # no unused strip beside the image
        for frame, image in zip(frames, shown, strict=True):
            enlarged = np.repeat(np.repeat(_logged(image), 3, axis=0), 3, axis=1)
            assert np.array_equal(frame[:tile, :tile], enlarged)


def test_captions_say_turn_thought_script_error_and_outcome(runs):
    episode = load_episode(runs["llm"] / "episodes" / "01-04-03_t1")
    shown = episode.shown_frames()
    first = " | ".join(text for _, text in caption(episode, shown[0]))
    assert "turn 1 · image 1/3" in first and "Think: The arena looks empty" in first
    assert "Script: Turn(30); Go(4);" in first
    assert f"After {episode.turns[0].steps} steps: health {episode.turns[0].health:.2f}" in first
    invalid = " | ".join(text for _, text in caption(episode, shown[3]))
    assert "Reply did not parse:" in invalid and "I would rather not move." in invalid
    last = " | ".join(text for _, text in caption(episode, shown[-1]))
    assert "Clock run out with" in last and ("PASSED" in last or "FAILED" in last)
    frames = render_frames(episode)
    tile = tile_size(episode)
    # the caption panel is drawn, and differs with the caption
    assert not np.array_equal(frames[0][tile:], frames[3][tile:])
    assert len(np.unique(frames[0][tile:].reshape(-1, 3), axis=0)) > 10


def test_long_thoughts_are_wrapped_and_cut(runs):
    episode = load_episode(runs["heuristic"] / "episodes" / "04-16-01_t1")
    record = episode.turns[1]
    words = " ".join(f"word{i}" for i in range(600)) + " " + "x" * 400
    long = dataclasses.replace(record, commands=({"op": "Think", "arg": words},))
    episode = dataclasses.replace(episode, turns=(episode.turns[0], long, *episode.turns[2:]))
    style = CaptionStyle(max_lines=12)
    frames = render_frames(episode, style=style)
    tile = tile_size(episode)
    font = _font(style.font_size)
    line = font.getbbox("Ágjy|")[3] - font.getbbox("Ágjy|")[1] + style.line_spacing
    assert frames[0].shape[0] <= tile + 12 * line + 2 * style.margin + 16


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab cdéWM—.1"), max_size=300),
       st.integers(min_value=40, max_value=600))
def test_wrapping_fits_the_width_and_keeps_every_character(text, width):
    font = _font(15)
    rows = _wrap_paragraph(text, font, width)
    assert all(font.getlength(row) <= width or len(row) == 1 for row in rows)
    assert "".join(rows).replace(" ", "") == text.replace(" ", "")


def test_gif_and_mp4_read_back_with_every_frame(runs, tmp_path, capsys):
    episode_dir = runs["heuristic"] / "episodes" / "04-16-01_t1"
    count = len(load_episode(episode_dir).shown_frames())
    gif, mp4 = tmp_path / "a.gif", tmp_path / "a.mp4"
    assert main([str(episode_dir), "--out", str(gif)]) == 0
    assert main([str(episode_dir), "--out", str(mp4), "--fps", "4"]) == 0
    out = capsys.readouterr().out
    assert f"wrote {gif}: {count} frames" in out and f"wrote {mp4}: {count} frames" in out
    frames = iio.imread(gif, index=None)
    assert frames.shape[0] == count
    video = iio.imread(mp4, index=None, plugin="FFMPEG")
    assert video.shape[0] == count and video.shape[1:] == frames.shape[1:]
    assert iio.immeta(mp4, plugin="FFMPEG")["fps"] == 4
    assert iio.immeta(gif, index=0)["duration"] == 1000


class Interrupting:
    """A frame whose pixels cannot be read: Ctrl-C while ffmpeg waits for them."""

    def __array__(self, dtype=None, copy=None):
        raise KeyboardInterrupt


def interrupted(frames, suffix, monkeypatch):
    """``frames``, to be written with Ctrl-C arriving as the encoder writes the third."""
    if suffix == ".mp4":  # ffmpeg is fed one frame at a time
        return [*frames[:2], Interrupting(), *frames[2:]]
    write, calls = GifImagePlugin._write_frame_data, itertools.count()

    def write_or_stop(*args, **kwargs):
        if next(calls) == 2:
            raise KeyboardInterrupt
        return write(*args, **kwargs)

    monkeypatch.setattr(GifImagePlugin, "_write_frame_data", write_or_stop)
    return frames


@pytest.mark.parametrize("suffix", [".gif", ".mp4"])
def test_an_interrupted_animation_leaves_the_old_file_whole(tmp_path, monkeypatch, suffix):
    frames = [np.full((64, 64, 3), value, np.uint8) for value in (0, 80, 160, 240)]
    path = write_animation(frames, tmp_path / f"a{suffix}", fps=2)
    before = path.read_bytes()
    with pytest.raises(KeyboardInterrupt):
        write_animation(interrupted(frames[::-1], suffix, monkeypatch), path, fps=2)
    assert path.read_bytes() == before  # not a truncated animation that looks whole
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary file left
    with pytest.raises(KeyboardInterrupt):
        write_animation(interrupted(frames, suffix, monkeypatch), tmp_path / f"b{suffix}")
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # none where there was none
    assert iio.imread(path, index=None).shape[0] == 4


def test_overview_panel_sits_beside_the_first_person_frame(runs, tmp_path):
    episode = load_episode(runs["heuristic"] / "episodes" / "04-16-01_t1")
    tile = tile_size(episode, overview=True)
    assert tile == 256  # two 256 px panels fill the caption's width
    report = resimulate(episode, overview_size=tile)
    frames = render_frames(episode, overviews=report.overviews)
    assert frames[-1].shape[1] == 2 * tile  # no unused strip beside the panels
    key = (episode.shown_frames()[-1].turn, 0)
    panel, raw = frames[-1][:tile, tile:2 * tile], report.overviews[key]
    changed = np.any(panel != raw, axis=2)
    assert 0 < changed.mean() < 0.05  # the trail and the arrow, nothing else
    assert np.array_equal(panel[~changed], raw[~changed])
    path = write_animation(frames, tmp_path / "o.gif", fps=2)
    assert iio.imread(path, index=None).shape[0] == len(frames)


def test_overview_marks_the_agent_heading_and_trail_where_the_log_puts_it(runs):
    episode = load_episode(runs["heuristic"] / "episodes" / "04-16-01_t1")
    tile = tile_size(episode, overview=True)
    report = resimulate(episode, overview_size=tile)
    frames = render_frames(episode, overviews=report.overviews)
    shown = episode.shown_frames()
    last = episode.turns[shown[-1].turn - 2].state  # pose when the last image was taken
    x, z, yaw = last["position"][0], last["position"][2], last["yaw"]
    panel = frames[-1][:tile, tile:2 * tile]
    # a point 1 m ahead of the agent along its heading lies inside the white arrow
    ahead = _pixel(x + math.sin(math.radians(yaw)), z + math.cos(math.radians(yaw)), tile)
    assert tuple(panel[round(ahead[1]), round(ahead[0])]) == ARROW
    # the trail passes through where the agent was after its first script
    first = episode.turns[0].state
    u, v = _pixel(first["position"][0], first["position"][2], tile)
    around = panel[round(v) - 2:round(v) + 3, round(u) - 2:round(u) + 3].reshape(-1, 3)
    assert any(tuple(pixel) == TRAIL for pixel in around)
    # the first frames show no trail yet: only the arrow differs from the raw overview
    first_frame = frames[0][:tile, tile:2 * tile]
    assert not any(tuple(p) == TRAIL for p in first_frame.reshape(-1, 3))


def test_overview_option_on_the_command_line(runs, tmp_path, capsys):
    out = tmp_path / "o.mp4"
    episode_dir = runs["replay"] / "episodes" / "01-04-03_t1"
    assert main([str(episode_dir), "--overview", "--out", str(out)]) == 0
    assert "warning" not in capsys.readouterr().err
    assert iio.imread(out, index=None, plugin="FFMPEG").shape[0] == len(
        load_episode(episode_dir).shown_frames())


def test_default_output_is_a_gif_named_after_the_episode(runs, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main([str(runs["human"] / "episodes" / "04-16-01_t1")]) == 0
    assert (tmp_path / "04-16-01_t1.gif").stat().st_size > 0


@pytest.mark.parametrize("argv, message", [
    (["{episode}", "--out", "x.avi"], "animation format must be one of .gif, .mp4"),
    (["{episode}", "--fps", "0"], "--fps must be positive"),
    (["{run}"], "this is a run directory, pass one of episodes/{01-04-03_t1, 04-16-01_t1}"),
    (["{run}/nowhere"], "is not an episode directory"),
])
def test_bad_input_is_a_clear_error(runs, capsys, argv, message):
    run = runs["heuristic"]
    argv = [a.format(run=run, episode=run / "episodes" / "01-04-03_t1") for a in argv]
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_malformed_log_names_file_and_line(runs, copy_run, capsys):
    episode_dir = copy_run(runs["heuristic"]) / "episodes" / "01-04-03_t1"
    lines = (episode_dir / "turns.jsonl").read_text().splitlines()
    lines[2] = lines[2][:40]
    (episode_dir / "turns.jsonl").write_text("\n".join(lines) + "\n")
    assert main([str(episode_dir), "--out", str(episode_dir / "a.gif")]) == 2
    assert "turns.jsonl:3:" in capsys.readouterr().err


def test_a_log_cut_by_a_kill_replays_its_intact_turns(runs, copy_run, capsys):
    """A kill while a turn line is being written leaves it unterminated and unreadable."""
    episode_dir = copy_run(runs["heuristic"]) / "episodes" / "01-04-03_t1"
    (episode_dir / "result.json").unlink()  # the kill came before the episode was sealed
    log = episode_dir / "turns.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[:3]) + lines[3][: len(lines[3]) // 2])
    out = episode_dir / "cut.gif"
    assert main([str(episode_dir), "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert f"{log}:4: the log ends in a cut line" in err
    assert "it is intact up to turn 2; replaying the intact turns" in err
    episode = load_episode(episode_dir)
    assert [t.turn for t in episode.turns] == [1, 2]
    assert iio.imread(out).shape[0] == len(episode.shown_frames())


@pytest.mark.parametrize("resimulate", [False, True], ids=["animate", "resimulate"])
@pytest.mark.parametrize("planted", ["absolute", "climbing", "symlink"])
def test_a_frame_outside_the_episode_is_neither_read_nor_drawn(runs, copy_run, capsys, tmp_path,
                                                               planted, resimulate):
    """A shared run folder whose log names a file of this machine as a frame: the replay
    refuses it (file and turn named) and writes no animation holding it."""
    episode_dir = copy_run(runs["heuristic"]) / "episodes" / "01-04-03_t1"
    secret = tmp_path / "secret.png"
    secret.write_bytes((episode_dir / load_episode(episode_dir).turns[0].sent_images[0])
                       .read_bytes())
    log = episode_dir / "turns.jsonl"
    records = [json.loads(line) for line in log.read_text().splitlines()]
    first = next(r for r in records if r["turn"] >= 1 and r["sent_images"])
    if planted == "absolute":
        first["sent_images"][0] = str(secret)
    elif planted == "climbing":
        first["sent_images"][0] = "../../../secret.png"
    else:
        (episode_dir / first["sent_images"][0]).unlink()
        (episode_dir / first["sent_images"][0]).symlink_to(secret)
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    out = tmp_path / "leak.gif"
    assert main([str(episode_dir), *(["--resimulate"] if resimulate else ["--out", str(out)])]) == 2
    assert f"{log}: turn {first['turn']}: frame" in capsys.readouterr().err
    assert not out.exists()
