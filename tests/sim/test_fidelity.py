"""The simulator against the real Unity recording (aai-rules.md section 8)."""

import pytest

from llm_aai.sim.fidelity import read_recording, replay_recording


@pytest.fixture(scope="module")
def replay(recording_dir):
    return replay_recording(recording_dir)


def test_recording_has_41_scored_scripts(recording_dir):
    scripts = read_recording(recording_dir)
    assert len(scripts) == 42
    assert sum(s.health is not None for s in scripts) == 41


def test_health_after_every_script_matches_within_0_1(replay):
    scored = [s for s in replay.scripts if s.recorded_health is not None]
    assert len(scored) == 41
    errors = {s.index: round(s.health - s.recorded_health, 3) for s in scored}
    assert max(abs(e) for e in errors.values()) <= 0.1, errors


def test_yellow_balls_collected_at_scripts_18_and_20(replay):
    pickups = {s.index: [e.kind for e in s.events] for s in replay.scripts if s.events}
    assert pickups.get(18) == ["GoodGoalMulti"]
    assert pickups.get(20) == ["GoodGoalMulti"]
    assert all(k in (18, 20, 42) for k in pickups), pickups


@pytest.mark.xfail(strict=True, reason=(
    "Unity's agent travels less than ours from script 36 on; no Unity/PhysX fact found "
    "explains it. Poses fitted to the recorded frames (our renderer at candidate poses, "
    "floor/sky/fence/box/magenta masks; about +-0.3 m, +-3 deg): after 35 Unity is at "
    "(25.5-25.7, 6.9-7.3) yaw 64-68, ours (25.58, 7.04) yaw 66. Script 36 Go(15) from rest "
    "with nothing in the way: the mid-motion frame 36.15 fits 10.0-10.5 m travelled (ours "
    "11.66, the speed table's 11.6) and the resting frame 37.8 fits 12.5-13.0 m at heading "
    "70-73 deg, (37.1-37.6, 10.8-11.0) (ours 14.05 m at 66 deg, (38.41, 12.76)): Unity moved "
    "as the table's Go(14) (10.39 + 2.28 m), as if ~3 thrust frames were lost, while Go(9) "
    "and Go(10) earlier match the table. Script 38: Unity's frames show the pushed 2 kg "
    "Cardbox on the floor just ahead of the agent along the fence, and the agent at rest at "
    "(39.5, 21.0). Our boxes no longer fly (MuJoCo's sliding-contact lift removed from floor "
    "and box-box contacts, tests/sim/test_pushing.py): the pushed box now stays within 0.55 m"
    " of its rest height (it pivots on an edge: the agent hits it 0.5 m below its centre) and"
    " the stacked one within 0.25 m, but the 100 kg agent still loses only the ~2% of its "
    "speed that momentum exchange with a 2 kg box implies: after 38 it is at (39.50, 22.29), "
    "after 39 (39.50, 23.99), or 22.85 when 38 starts from Unity's pose (Unity ~21.0). No "
    "fact found explains Unity's stop (a jam of the box against the fence?). Earlier leads on"
    " the final z after 39 (then 23.99): Unity's grounded flag cleared by any "
    "OnCollisionExit, upper bound 23.57; agent-box friction acting on the box too (MuJoCo "
    "pair, mu 0.425): 23.93. So the last Go(10) passes north of the GoodGoal (return 1.74). "
    "Replaying 36-37 with k thrust frames dropped and the velocity turned d deg from the "
    "facing fits the frames best at k=4, d=4-6 (facing unchanged: 36.15 and 37.8 fit yaw "
    "64-68 and 14-18). Rejected: rigidbody sleep (every transform.Rotate wakes the body; "
    "PhysX keeps a pair's touch state through sleep), a wall contact (>= 0.42 m clear on "
    "every fitted path), ML-Agents step order (every step is 3 frames: health drops 0.06 per "
    "step in all 41 scripts); for script 38, the friction of box on box and of box on fence "
    "(the agent ends 38 at z 22.28-22.29 with either frictionless, MuJoCo's, or box-box at "
    "0.6). Unity's frame 38.15 shows the box's near bottom edge about 0.4 m above the floor "
    "(its top is out of the frame, so it is within ~3.8 m: tilted or lifted onto the agent)"))
def test_good_goal_touched_in_the_last_go_ending_the_episode(replay):
    last = replay.scripts[-1]
    assert last.index == 42 and replay.end_reason == "good_goal"
    assert [e.kind for e in last.events] == ["GoodGoal"]
    assert replay.total_reward == pytest.approx(2.74, abs=0.05)
