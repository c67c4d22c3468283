"""What-ifs: a script played on a copy of the episode, reported, and undone without a trace."""

from __future__ import annotations

import numpy as np
import pytest

from llm_aai.env import AnimalAIEnv
from llm_aai.playback import PlayedTurn, play_scripts
from llm_aai.protocol import Episode
from llm_aai.protocol.what_if import WhatIf, what_if
from tests.helpers.arenas import write_arena
from tests.helpers.backends import ProtocolOnly

SCRIPTS = ["Go(3);", "Turn(90);Go(4);", "Turn(-180);Go(8);", "Go(-3);Turn(-45);", "Go(12);",
           "Turn(30);Go(6);"]
ASKED = ["Go(30);", "Turn(180);Go(20);", "Go(-10);Turn(90);Go(10);", "Turn(5);", "nonsense"]


def _played(env, scripts, seed=0):
    """Every turn's JSON line and frames, what-ifs reported apart."""
    lines, frames, asked = [], [], []
    for turn in play_scripts(env, scripts, seed=seed):
        if isinstance(turn, WhatIf):
            asked.append(turn)
            continue
        lines.append(turn.to_json_line())
        frames.append(b"".join(np.ascontiguousarray(f).tobytes() for f in turn.frames))
    return lines, frames, asked


def _interleaved():
    """The scripts with every what-if asked before each of them."""
    scripts = []
    for script in SCRIPTS:
        scripts += [f"? {question}" for question in ASKED] + [script]
    return scripts


@pytest.mark.parametrize("physics_build", ["3.x", "2019"])
@pytest.mark.parametrize("task", ["01-04-03", "03-02-01", "07-15-01", "09-05-03"])
def test_what_ifs_leave_the_episode_exactly_as_it_was(task, physics_build, testbed_dir):
    """Frames, health, rewards, events and steps are byte for byte those of the same
    scripts played with no what-if asked (testbed tasks with goals, walls and pushable
    boxes, both physics builds)."""
    def env():
        return AnimalAIEnv(task, resolution=64, arenas_dir=testbed_dir,
                           backend_kwargs={"physics_build": physics_build})

    plain, with_questions = env(), env()
    try:
        lines, frames, none_asked = _played(plain, SCRIPTS)
        lines_q, frames_q, asked = _played(with_questions, _interleaved())
    finally:
        plain.close()
        with_questions.close()
    assert none_asked == []
    assert len(asked) >= len(ASKED)  # at least the questions before the first script
    assert lines_q == lines
    assert frames_q == frames


@pytest.fixture
def two_balls(tmp_path):
    """The agent at (20, 20) facing +z: a green ball 6 m ahead, a red one 6 m behind."""
    return write_arena(tmp_path, """\
        !ArenaConfig
        arenas:
          0: !Arena
            t: 500
            items:
            - !Item
              name: Agent
              positions: [!Vector3 {x: 20, y: 0, z: 20}]
              rotations: [0]
            - !Item
              name: GoodGoal
              positions: [!Vector3 {x: 20, y: 0, z: 26}]
              sizes: [!Vector3 {x: 1, y: 1, z: 1}]
            - !Item
              name: BadGoal
              positions: [!Vector3 {x: 20, y: 0, z: 14}]
              sizes: [!Vector3 {x: 1, y: 1, z: 1}]
            - !Item
              name: Wall
              positions: [!Vector3 {x: 26, y: 0, z: 20}]
              rotations: [0]
              sizes: [!Vector3 {x: 1, y: 3, z: 10}]
            - !Item
              name: DeathZone
              positions: [!Vector3 {x: 13, y: 0, z: 20}]
              rotations: [0]
              sizes: [!Vector3 {x: 3, y: 0, z: 6}]
        """)


@pytest.fixture
def episode(two_balls):
    env = AnimalAIEnv(two_balls, resolution=64)
    episode = Episode(env)
    episode.start(seed=0)
    yield episode
    env.close()


@pytest.mark.parametrize(("script", "first", "end"), [
    ("Go(10);", "GoodGoal", "good_goal"),            # the green ball ahead
    ("Turn(180);Go(10);", "BadGoal", "bad_goal"),    # the red ball behind
    ("Turn(-90);Go(10);", "DeathZone", "death_zone"),  # the death zone on the left
    ("Turn(90);Go(10);", None, None),                # the wall on the right stops the agent
    ("Turn(45);", None, None),                       # no step forward: nothing touched
])
def test_the_first_event_is_what_the_script_would_touch(episode, script, first, end):
    answer = what_if(episode, script)
    assert answer.first_event == first
    assert answer.end_reason == end and answer.done == (end is not None)
    assert answer.error is None


def test_a_blocked_script_reports_where_the_agent_stopped_and_what_it_sees(episode):
    answer = what_if(episode, "Turn(90);Go(20);")
    x, _, z = answer.position
    assert 24 < x < 25.6 and abs(z - 20) < 0.2  # against the wall's west face at x = 25.5
    assert answer.yaw == pytest.approx(90.0)
    assert answer.in_view[0].name == "Wall" and answer.in_view[0].distance < 1.5
    assert answer.health < 100 and answer.steps == 35


def test_after_a_what_if_the_live_episode_plays_the_real_outcome(episode):
    assert what_if(episode, "Turn(180);Go(10);").first_event == "BadGoal"
    turn = episode.play("Go(10);")
    assert episode.totals.end_reason == "good_goal" and turn.outcome.reward > 0.9


def test_a_refused_script_is_reported_with_its_reason(episode):
    answer = what_if(episode, "Go(1000);")
    assert answer.error is not None and "out of range" in answer.error
    assert answer.first_event is None and answer.steps == 1  # the protocol's no-op


def test_no_what_if_once_the_episode_has_ended(episode):
    episode.play("Go(10);")
    with pytest.raises(RuntimeError, match="still takes replies"):
        what_if(episode, "Go(1);")


def test_a_backend_that_cannot_copy_its_world_says_so(two_balls):
    env = AnimalAIEnv(two_balls, resolution=64, backend=ProtocolOnly())
    try:
        episode = Episode(env)
        episode.start(seed=0)
        with pytest.raises(NotImplementedError, match="embedded simulator"):
            what_if(episode, "Go(3);")
    finally:
        env.close()


def test_the_json_line_marks_a_what_if(episode):
    data = what_if(episode, "Go(10);").to_json()
    assert data["what_if"] is True and data["first_event"] == "GoodGoal"
    assert data["events"] == ["GoodGoal"] and data["in_view"][0]["name"] == "GoodGoal"
    assert "error" not in data


def test_played_turns_and_what_ifs_are_told_apart(two_balls):
    env = AnimalAIEnv(two_balls, resolution=64)
    try:
        turns = list(play_scripts(env, ["? Go(10);", "Turn(45);", "?Go(2);"]))
    finally:
        env.close()
    assert [type(turn) for turn in turns] == [PlayedTurn, WhatIf, PlayedTurn, WhatIf]
    assert turns[3].script == "Go(2);"
