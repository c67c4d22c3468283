"""``resimulate(probe=...)``: the simulator asked about its state at each turn's observation."""

from __future__ import annotations

import math

from llm_aai.replay import load_episode, resimulate
from tests.replay.conftest import episode_dirs


def test_the_probe_sees_each_script_turn_where_the_turn_before_left_the_agent(runs):
    episode = load_episode(episode_dirs(runs["heuristic"])[0])
    report = resimulate(episode, probe=lambda backend: backend.layout()[0])
    assert report.ok, report.render()
    scripts = [record for record in episode.turns if record.reply is not None]
    assert sorted(report.probes) == [record.turn for record in scripts]
    for before, record in zip(episode.turns, episode.turns[1:], strict=False):
        if record.reply is None or before.state is None:
            continue
        eye = report.probes[record.turn]
        turned = (eye.yaw - float(before.state["yaw"]) + 180.0) % 360.0 - 180.0
        assert math.isclose(turned, 0.0, abs_tol=1e-6), record.turn
        x, _, z = before.state["position"]
        assert math.hypot(eye.position[0] - x, eye.position[2] - z) < 0.6  # the eye is on the agent


def test_without_a_probe_nothing_is_asked(runs):
    episode = load_episode(episode_dirs(runs["heuristic"])[0])
    assert resimulate(episode).probes == {}


def test_the_final_probe_sees_where_the_last_turn_left_the_agent(runs):
    episode = load_episode(episode_dirs(runs["heuristic"])[0])
    report = resimulate(episode, final_probe=lambda backend: backend.layout()[0])
    assert report.ok, report.render()
    last = next(record for record in reversed(episode.turns) if record.state is not None)
    eye = report.final
    x, _, z = last.state["position"]
    assert math.hypot(eye.position[0] - x, eye.position[2] - z) < 0.6
    turned = (eye.yaw - float(last.state["yaw"]) + 180.0) % 360.0 - 180.0
    assert math.isclose(turned, 0.0, abs_tol=1e-6)
    assert resimulate(episode).final is None
