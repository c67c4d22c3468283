"""Several simulators sharing the process's one OpenGL context, from several threads."""

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from llm_aai.sim import Simulator
from tests.helpers.arenas import arena, obj

SCENES = (
    arena(obj("GoodGoal", (20, 0, 24), (1, 1, 1))),
    arena(obj("Wall", (22, 0, 24), (2, 2, 1), color=(1, 0, 1)), yaw=30),
    arena(obj("BadGoal", (18, 0, 23), (2, 2, 2)), obj("HotZone", (20, 0, 26), (4, 0.5, 4))),
    arena(obj("Cardbox1", (20, 0, 23), (1, 1, 1)), yaw=300),
)
ACTIONS = [(1, 1), (1, 0), (0, 2), (2, 2), (1, 1), (0, 0)] * 2


def _frames(placed, sims: list) -> list[np.ndarray]:
    sim = Simulator(96)
    sims.append(sim)
    sim.load(placed, np.random.default_rng(0))
    frames = [sim.observe()]
    for move, turn in ACTIONS:
        sim.step(move, turn)
        frames.append(sim.observe())
    return frames


def test_threads_render_exactly_what_one_thread_renders():
    sims: list[Simulator] = []
    try:
        alone = [_frames(placed, sims) for placed in SCENES]
        with ThreadPoolExecutor(len(SCENES)) as pool:
            together = list(pool.map(lambda placed: _frames(placed, sims), SCENES))
    finally:
        for sim in sims:
            sim.close()
    for scene, (mine, theirs) in enumerate(zip(alone, together, strict=True)):
        assert len(mine) == len(theirs) == len(ACTIONS) + 1
        for k, (a, b) in enumerate(zip(mine, theirs, strict=True)):
            assert np.array_equal(a, b), f"scene {scene}, frame {k} differs between threads"
    # the scenes really differ, so a renderer drawing another simulator's arena would show
    assert not np.array_equal(alone[0][0], alone[1][0])


def test_a_closed_simulator_leaves_the_others_drawing():
    first, second = Simulator(64), Simulator(64)
    first.load(SCENES[0], np.random.default_rng(0))
    second.load(SCENES[1], np.random.default_rng(0))
    before = second.observe()
    first.close()
    assert np.array_equal(second.observe(), before)
    second.close()


def test_a_large_overview_grows_the_buffer_and_leaves_the_eye_unchanged():
    sim = Simulator(64)
    try:
        sim.load(SCENES[1], np.random.default_rng(0))
        eye = sim.observe()
        small = sim.render_overview(64)
        large = sim.render_overview(256)  # four times the buffer the 64 px eye needed
        assert large.shape == (256, 256, 3)
        # the same picture at four times the size: block averages agree with the small one
        shrunk = large.reshape(64, 4, 64, 4, 3).mean(axis=(1, 3))
        assert np.abs(shrunk - small).mean() < 12
        assert np.array_equal(sim.observe(), eye)
    finally:
        sim.close()


def test_the_eye_is_drawn_from_where_the_step_left_the_agent():
    """``mj_step`` computes world poses before it integrates, so right after a step they lag
    ``qpos`` by one physics step (0.02 s: 0.1 m here, 0.3 m at full speed). The frame must show
    the state the step produced, and drawing it must not change the physics."""
    import mujoco

    sim, twin = Simulator(64), Simulator(render=False)
    try:
        for s in (sim, twin):
            s.load(SCENES[0], np.random.default_rng(0))
        for _ in range(3):
            for s in (sim, twin):
                s.step(1, 0)
            frame = sim.observe()
        assert sim.state.velocity[2] > 4.0  # moving: a stale pose would be 0.1 m behind
        assert sim.state == twin.state
        mujoco.mj_forward(sim._model, sim._data)  # poses recomputed from qpos by hand
        assert np.array_equal(sim.observe(), frame)
    finally:
        sim.close()
