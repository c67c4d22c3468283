"""Health after a death zone on the Unity recording's arena, as ``play`` and the bridge see it."""

from llm_aai.arena.yaml_io import load_config
from llm_aai.calibration.fidelity import REPLAY_PROTOCOL, read_recording
from llm_aai.env.headless import HeadlessEnv
from llm_aai.protocol import Episode

INTO_THE_DEATH_ZONE = "Go(6);Turn(-90);Go(9);"
"""From where the recording's 10th script leaves the agent, this walks into the red zone."""


def test_death_zone_reached_with_partial_health_reports_zero(recording_dir):
    """The recording's first 10 scripts cost about 10 health; the death zone then used to
    report -9.86 (health 90.14 - 100), where Unity's UpdateHealth stops at 0."""
    arena = load_config(recording_dir / "arena.yaml").arena()
    env = HeadlessEnv(arena, resolution=64)
    sim = env.simulator
    try:
        episode = Episode(env, REPLAY_PROTOCOL)
        episode.start(seed=0)
        for script in read_recording(recording_dir)[:10]:
            episode.play(script.text)
        health_before = sim.health
        reward_before = sim.total_reward
        episode.play(INTO_THE_DEATH_ZONE)
        assert 80.0 < health_before < 100.0
        assert sim.end_reason == "death_zone"
        assert sim.health == 0.0
        # the return still takes the zone's -1 in full (and the steps' decay)
        assert sim.total_reward < reward_before - 1.0
    finally:
        env.close()
