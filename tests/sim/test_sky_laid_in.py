"""Frames under 128 px get their sky from a picture (``llm_aai.sim.render.lays_in_sky``).

What a laid-in frame must be: within one level in a channel, the frame MuJoCo draws, or
where that frame's sky covers far geometry, the frame it draws when its sky lies beyond every
object. MuJoCo puts its sky 0.7 x ``zfar`` (49 m) from the eye, nearer than the arena's far
corners (up to 59 m), so a frame drawn with the model's own ``zfar`` shows sky where those
corners are; the second reference is drawn with ``zfar`` doubled, which also changes the depth
buffer's precision, so at a few pixels where two surfaces meet only the first one matches.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import mujoco
import numpy as np
import pytest

from llm_aai.sim import Simulator
from llm_aai.sim.render import lays_in_sky
from tests.helpers.arenas import arena, obj

SCENES = (
    arena(obj("GoodGoal", (20, 0, 24), (1, 1, 1)), obj("Wall", (25, 0, 30), (4, 8, 1))),
    # from a corner towards the far one: its fence is about 50 m away
    arena(obj("HotZone", (10, 0, 10), (4, 0.5, 4)), obj("DeathZone", (30, 0, 30), (4, 0.5, 4)),
          agent=(3.0, 0.0, 3.0), yaw=45),
    arena(obj("CylinderTunnel", (30, 0, 30), (3, 3, 5)), obj("Ramp", (20, 0, 30), (4, 2, 4)),
          agent=(30.0, 0.0, 20.0), yaw=300),
)
WALK = ((1, 0), (1, 1), (1, 1), (0, 2), (1, 2), (1, 0))


def _drawn(sim: Simulator, *, far_sky: bool) -> np.ndarray:
    """The eye frame with MuJoCo drawing the sky (``far_sky``: past every object)."""
    renderer, visual = sim._renderer, sim._model.vis.map
    zfar = visual.zfar
    visual.zfar = 2 * zfar if far_sky else zfar
    try:
        return renderer._draw(sim._data, sim.resolution, renderer._eye_camera,
                              renderer._eye_option)
    finally:
        visual.zfar = zfar


def _gap(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.abs(a.astype(np.int16) - b).max(axis=2)


def _gap_to_drawn(frame: np.ndarray, sim: Simulator) -> np.ndarray:
    """Each pixel's gap to the nearer of the two references (the module's docstring)."""
    return np.minimum(_gap(frame, _drawn(sim, far_sky=False)),
                      _gap(frame, _drawn(sim, far_sky=True)))


def test_the_threshold_is_the_small_frames_one():
    assert lays_in_sky(84) and lays_in_sky(127)
    assert not lays_in_sky(128) and not lays_in_sky(512)


@contextmanager
def _loaded(scene, resolution: int = 84) -> Iterator[Simulator]:
    sim = Simulator(resolution)
    try:
        sim.load(scene, np.random.default_rng(0))
        yield sim
    finally:
        sim.close()


def _assert_drawn_whole(sim: Simulator) -> None:
    """The next frame draws its sky: exactly the frame MuJoCo draws."""
    frame = sim.observe()
    assert not sim._renderer.sky_laid_in
    assert np.array_equal(frame, _drawn(sim, far_sky=False))


@pytest.mark.parametrize("scene", range(len(SCENES)))
def test_a_laid_in_sky_is_the_drawn_one_within_a_level(scene):
    with _loaded(SCENES[scene]) as sim:
        for k in range(len(WALK) + 1):
            if k:
                sim.step(*WALK[k - 1])
            frame = sim.observe()
            assert sim._renderer.sky_laid_in
            assert _gap_to_drawn(frame, sim).max() <= 1
            sky = (frame[..., 2] > frame[..., 0] + 40)  # the blue above the horizon
            assert sky.sum() > 0.1 * sky.size


def test_far_corners_show_where_mujoco_s_near_sky_hid_them():
    with _loaded(SCENES[1]) as sim:
        frame = sim.observe()
        near_sky = _drawn(sim, far_sky=False)
        far_sky = _drawn(sim, far_sky=True)
    hidden = _gap(near_sky, far_sky) > 16  # the fence past 49 m, covered by the near sky
    assert hidden.any()
    assert _gap(frame, far_sky)[hidden].max() <= 1


def test_large_frames_draw_their_sky():
    with _loaded(SCENES[0], 128) as sim:
        _assert_drawn_whole(sim)


def test_see_through_walls_draw_their_sky():
    with _loaded(arena(obj("WallTransparent", (20, 0, 16), (10, 5, 1)))) as sim:
        _assert_drawn_whole(sim)


def test_anything_drawn_over_the_open_sky_has_the_frame_drawn_whole():
    with _loaded(SCENES[0]) as sim:
        sim.observe()
        assert sim._renderer.sky_laid_in
        # the wall (the scene's second object) made see-through after loading, which the
        # check at load cannot know; it stands against the sky
        wall = mujoco.mj_name2id(sim._model, mujoco.mjtObj.mjOBJ_GEOM, "obj1")
        assert sim._model.geom_type[wall] == mujoco.mjtGeom.mjGEOM_BOX
        sim._model.geom_rgba[wall, 3] = 0.5
        _assert_drawn_whole(sim)


def test_a_frame_does_not_depend_on_what_was_drawn_before():
    first, second = Simulator(84), Simulator(84)
    try:
        for sim in (first, second):
            sim.load(SCENES[2], np.random.default_rng(0))
        first.observe()  # its sky picture drawn before the walk, the second's after it
        for move, turn in WALK:
            first.step(move, turn)
            second.step(move, turn)
        assert np.array_equal(first.observe(), second.observe())
    finally:
        first.close()
        second.close()


def test_multisampled_frames_draw_their_sky():
    """A multisampled edge blends with the cleared black, which a picture laid in behind it
    cannot undo."""
    with _loaded(SCENES[1]) as sim:
        sim._model.vis.quality.offsamples = 4
        sim._renderer.bind(sim._model)
        _assert_drawn_whole(sim)


def test_a_renderer_without_a_model_says_so():
    from llm_aai.sim.render import ArenaRenderer

    with pytest.raises(RuntimeError, match="call bind"):
        ArenaRenderer().eye(None, 84)
