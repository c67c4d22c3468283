"""The simulator against the real Unity recording (docs/animal-ai-facts.md §7)."""

import numpy as np
import pytest
from PIL import Image

from llm_aai.calibration.fidelity import read_recorded_frame, read_recording, replay_recording


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


def _sky_gap_columns(frame: np.ndarray) -> tuple[float, float]:
    """Median first and last sky column over rows where only sky shows between two walls."""
    rgb = frame.astype(int)
    red, green, blue = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    magenta = (red > 120) & (blue > 120) & (green < 100)
    sky = (blue - red > 40) & ~magenta
    rows = [np.flatnonzero(sky[y]) for y in range(60, 140)]
    return (float(np.median([r.min() for r in rows if r.size])),
            float(np.median([r.max() for r in rows if r.size])))


def test_pose_after_35_scripts_matches_unity_to_a_few_centimetres(recording_dir):
    """After script 35 the agent looks through the gap between two walls (obs-35.4). The gap's
    edges are wall ends 4.5 and 6 m away: shifting our agent 3 cm north or south moves both
    by 1 px, turning it 0.3 degrees by 1-2 px (at the spawn pose they agree to the pixel), so
    agreeing within 3 px after 35 scripts of driving, turning and bumping walls bounds the
    drift of the whole trajectory, which the health and ball checks cannot see (measured:
    ours 1 px and 0 px left of Unity's; 2.0 and 1.5 px before the agent's friction was solved
    in the step of its contact and counted PhysX's damping once)."""
    replay = replay_recording(recording_dir, render=True)
    script = replay.scripts[34]
    assert script.index == 35
    with Image.open(recording_dir / "observations" / script.recorded_frame) as raw:
        assert raw.size == (516, 512)
    recorded = read_recorded_frame(recording_dir, script.recorded_frame)
    assert recorded.shape == (512, 512, 3)
    ours, unity = _sky_gap_columns(script.frame), _sky_gap_columns(recorded)
    assert np.allclose(ours, unity, atol=2.0), (ours, unity)


def test_the_box_charged_in_script_38_stands_upright_in_front_of_the_agent(recording_dir):
    """Unity's frame 38 shows the Cardbox the agent charged (2 m, 2 kg, pushed 0.5 m below its
    centre) upright, ahead of the agent against the fence: its east edge on the fence line,
    its centre at x 39.0-39.1 (frame 40 agrees), and the agent against the fence as well.
    With floor friction acting at the box's centre of mass rather than its bottom face, ours
    tumbled 67 degrees and slid aside.

    Not asserted, because ours differs: in Unity the box is 2.7-3.0 m ahead of the agent's
    centre with its bottom edge about 0.25 m off the floor (the panel border's width and the
    bottom edge's row); ours is against the agent (1 m ahead), 0.1 m up."""
    import math

    seen = {}

    def look(script, sim):
        if script.index != 38:
            return
        model, data = sim._model, sim._data
        box = next(b for b in range(model.nbody)
                   if np.allclose(model.body_pos[b][:2], (38.8, 16.0), atol=0.01))
        seen["tilt"] = math.degrees(math.acos(min(1.0, float(data.xmat[box][8]))))
        seen["box"] = data.xpos[box][:2].tolist()
        agent = sim.state.position
        seen["agent"] = (agent[0], agent[2])

    replay_recording(recording_dir, after_script=look)
    (box_x, box_z), (agent_x, agent_z) = seen["box"], seen["agent"]
    assert seen["tilt"] < 20.0, seen
    assert box_z - agent_z > 0.5 and abs(box_x - 39.05) < 0.5, seen
    assert agent_x > 39.4, seen  # the agent against the fence too (its centre at most 39.5)


@pytest.mark.xfail(strict=True, reason=(
    "A centimetre in script 36, then the charge in 38. Fitting a +-14 cm shift of our pose to "
    "the magenta walls of each frame puts Unity within 2 cm of ours in 16-35, 4 cm in frame "
    "20 just after the wall impact, and 18, 28, 33 are ambiguous; the gap test above: 1 px. "
    "In 36, Go(15) at yaw 66 passes the SE corner of the long wall (30.96, 10.0). Unity's "
    "frame 36.15 fits (34.95, 10.7) +-0.1: it clipped the corner. Ours passes: the physics "
    "step nearest the corner is 0.9 cm clear, inside the 2 cm contact offset, but at closest "
    "approach, so the contact has nothing to stop; the next is 2.3 cm clear. With the yellow "
    "balls' contacts solved for the agent alone (b54cb6b) the pose after 35 moved by 1 cm, a "
    "step fell 1.8 cm clear while still approaching, and ours clipped the corner, ending 36 "
    "at (35.54, 10.62) and 37 at (37.48, 11.23), near Unity's fit (37.1-37.6, 10.8-11.0). "
    "Unity's agent after 39-41: (39.5, 21.0-21.1), from the magenta walls with every box "
    "hidden (the ball's bearing in frames 40-41 agrees). After 38 it is against the fence "
    "(the fence's bottom line 0.89-0.93 m from the camera, 0.90 in frame 40) with the box "
    "2.7-3.0 m ahead: it was slow or stopped by the end of the charge. Ours, even started "
    "from Unity's 37 pose, pushes the box along the fence at 15 m/s to the end and coasts to "
    "22.6 (from our own 37 pose, 23.8). Ruled out: rigidbody sleep, ML-Agents step order, "
    "the grounded flag on OnCollisionExit (0.2 m at most, any callback order), box-box and "
    "box-fence friction, Cardbox2 mass (2 kg in AAI 3.1.3), the LLM-AAI harness. Not a proxy "
    "for Unity: PhysX 5 (SAPIEN, Unity's solver settings), whose agent slows along the fence "
    "in 38 because its wall friction grows while sliding, ends script 23 0.39 m from the pose "
    "that Unity's frame 23 and ours agree on. Also tried and not deciding (#52, "
    "docs/simulator.md): PhysX closing 80 % of a contact gap per step (return still 1.74), "
    "doubled face friction of the boxes without improved patch friction (2.4 cm in 38), "
    "PhysX friction every iteration in the cross-check (still slows in 38, touches the ball), "
    "PhysX's two capped patch-friction rows on the agent (pins it to the wall in script 22)"))
def test_good_goal_touched_in_the_last_go_ending_the_episode(replay):
    last = replay.scripts[-1]
    assert last.index == 42 and replay.end_reason == "good_goal"
    assert [e.kind for e in last.events] == ["GoodGoal"]
    assert replay.total_reward == pytest.approx(2.74, abs=0.05)
