"""``replay`` and ``replay --resimulate`` for every mode: the frames sent, the captions."""

from __future__ import annotations

from dataclasses import replace

import imageio.v3 as iio
import pytest

from llm_aai.cli.replay import main as replay
from llm_aai.protocol import EpisodeProtocol
from llm_aai.protocol.modes import ModeSettings
from llm_aai.replay import caption, load_episode
from llm_aai.runner import RunConfig, start_run

MODES = {
    "action": {"modes": ModeSettings(control="action"),
               "protocol": EpisodeProtocol(max_scripts=None, max_replies=6)},
    "observe-every": {"modes": ModeSettings(observe_every=4)},
    "filmstrip": {"modes": ModeSettings(observe_every=4, filmstrip=True)},
    "no-cap": {"protocol": EpisodeProtocol(max_scripts=None, max_replies=4)},
}


@pytest.mark.parametrize("mode", sorted(MODES))
def test_every_mode_animates_and_resimulates_as_a_match(mode, tmp_path, mode_arena, capsys):
    arenas = tmp_path / "testbed"
    arenas.mkdir()
    (arenas / "01-04-03.yaml").write_text(mode_arena(t=60, goal=(24, 20)).read_text())
    config = replace(RunConfig(model="heuristic", tasks="01-04-03", arenas_dir=arenas,
                               resolution=64, protocol=EpisodeProtocol(max_scripts=3)),
                     **MODES[mode])
    run_dir = start_run(config, out=tmp_path / "runs", run_id=mode, show_progress=False).run_dir
    episode_dir = run_dir / "episodes" / "01-04-03_t1"
    assert replay([str(episode_dir), "--resimulate"]) == 0
    assert "verdict: MATCH" in capsys.readouterr().out
    gif = tmp_path / f"{mode}.gif"
    assert replay([str(episode_dir), "--out", str(gif)]) == 0 and gif.stat().st_size > 0
    # a frame a step plays faster than a frame a script (was 1 fps for both)
    kind, fps = ("a per-action", 2) if mode == "action" else ("a script", 1)
    assert f"at {fps} fps (chosen for {kind} episode; --fps to change)" in capsys.readouterr().out
    assert iio.immeta(gif, index=0)["duration"] == 1000 / fps
    episode = load_episode(episode_dir)
    shown = episode.shown_frames()
    assert len(shown) == sum(len(turn.sent_images) for turn in episode.turns)
    texts = [" ".join(text for _, text in caption(episode, frame)) for frame in shown]
    if mode == "action":
        assert any("Action: forward x" in text or "Action: left x" in text
                   or "Action: right x" in text for text in texts), texts
    if mode in ("observe-every", "filmstrip"):
        several = [frame for frame in shown if frame.count > 1 and frame.record.turn > 1]
        assert several and "image 1/" in texts[shown.index(several[0])]
        assert "of your last reply" in texts[shown.index(several[0])]
