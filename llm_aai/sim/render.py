"""Offscreen rendering: the agent's first-person eye and a top-down overview.

A process has one OpenGL context, shared by all its simulators and lent to one thread at a
time (:func:`shared_gl`). Each simulator keeps its own ``MjrContext`` (its arena's textures,
meshes and offscreen framebuffer) and ``MjvScene`` inside that context, rebuilt only when
it loads another arena. Why one context: creating one and compiling its shaders costs
about 0.2 s of CPU, which sixteen concurrent episodes would each pay, while drawing a frame
takes a few milliseconds, so serialising draws loses little. Where Mesa's CPU renderer
rasterizes is chosen by the first frames a process draws (:func:`rasterizer_threads`).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from llm_aai.sim.scene import GROUP_AGENT, GROUP_INVISIBLE, GROUP_ZONE

_SPARE_GEOMS = 64
"""Scene slots beyond the model's geoms. An ``MjvScene`` costs its allocation up front: 4000
slots took 8.6 ms per arena load, more than compiling the arena; each geom needs one slot."""
_GL_SIZE = 1024
"""Nominal size of the shared context; frames go to each MjrContext's own offscreen buffer."""
SMALL_FRAME = 128
"""Frames narrower than this (reinforcement-learning observations) are drawn without shadows,
with coarser curves, and with their sky laid in from a picture."""
_DEFAULT_RGBA = (0.5, 0.5, 0.5, 1.0)
"""A geom's ``rgba`` when the MJCF gives none: MuJoCo then colours it with its material's."""


def draws_shadows(frame_size: int) -> bool:
    """Whether frames of ``frame_size`` pixels show the sun's shadows.

    Why not below ``SMALL_FRAME``: MuJoCo draws a shadowed frame in three passes (the
    shadow map from the sun, the scene in ambient light, the scene again lit by the sun
    through the map) and an unshadowed one in one. On a CPU renderer those passes, not the
    pixels, are an 84 px frame's cost: about 3x, whatever the map's size (a 32 px map saved
    a quarter). At 84 px a shadow is a few pixels wide; LLM-size frames keep every shadow
    and look and cost exactly as before.
    """
    return frame_size >= SMALL_FRAME


def curve_tessellation(frame_size: int) -> tuple[int, int]:
    """Slices and stacks of the meshes drawing spheres, capsules, cylinders and the sky.

    MuJoCo draws these primitives (goals, the fence's rails, the sky's dome) as meshes of
    ``visual/quality`` ``numslices`` x ``numstacks``: drawing only, the collision detector
    works with the analytic shapes. Why coarser below ``SMALL_FRAME``: an 84 px frame costs
    its triangles more than its pixels, and MuJoCo's 28 x 16 made each rail about 1,700
    triangles for a bar 1-3 px thick. 16 x 8 drew 84 px frames in 0.73-0.77x the time
    (``python -m benchmarks.bench_frame --tessellation``, three arenas, 300 frames of a
    random walk each) and changed 3-43 of a frame's 7,056 pixels, nine in ten by 1-4 levels
    (the shading across a goal, lit per vertex, and the sky's gradient); 0.06-1.1 a frame
    by more than 16 levels, on a goal's outline. Of the candidates measured (slices 8-16,
    stacks 4-8, box faces as 1 or 2 quads), fewer stacks and slices saved the most time per
    changed pixel, and below 16 x 8 each further step cost many more visible pixels for
    little time (docs/bridge.md, "Coarser curves in frames under 128 px"). Frames of
    ``SMALL_FRAME`` px and more keep MuJoCo's defaults and are drawn as before.
    """
    return (28, 16) if frame_size >= SMALL_FRAME else (16, 8)


def lays_in_sky(frame_size: int) -> bool:
    """Whether first-person frames of ``frame_size`` pixels get their sky from a picture.

    MuJoCo draws the sky after the opaque geoms: a cylinder centred on the eye, textured with
    the sky's cube map, over every pixel the geoms left empty; at 84 px it was a quarter of a
    frame's cost (``python -m benchmarks.bench_frame``, "without the sky": 0.71-0.85 x). The
    agent's eye only turns about the vertical (it never pitches or rolls) and the sky is
    centred on it, so which sky a pixel shows depends only on where the pixel is in the frame
    and, by one level at most, on the heading. Frames under ``SMALL_FRAME`` are therefore drawn
    without the sky, and the pixels no geom covered (depth at the far end) are filled from
    one picture of the sky drawn alone at heading 0. Every other pixel is the scene's, and the
    sky differs from a drawn one by at most one level in a channel; geometry past MuJoCo's sky
    (49 m away: the far corners of the fence), which the drawn sky covered, now shows, as in
    Unity (docs/bridge.md, "The sky laid in"). Frames of models with see-through walls or
    multisampling draw their sky, and so do larger frames, which LLM agents see.
    """
    return frame_size < SMALL_FRAME


def rasterizer_threads(frame_size: int) -> str | None:
    """Mesa llvmpipe's ``LP_NUM_THREADS`` for a process whose first frames are this size.

    Frames under ``SMALL_FRAME`` are rasterized in the calling thread ("0"); larger ones keep
    Mesa's default (None: one rasterizer thread per core). Why small frames: the default hands
    each frame to the rasterizer threads and the caller sleeps until they finish, two
    hand-offs a frame between threads that, on a virtual machine's idle cores, each wait to
    be woken, for a frame whose drawing is a millisecond. In the caller's thread the
    gymnasium env at 84 px ran 1.0-1.2 x (median 1.12) as fast as with Mesa's default and the
    bridge 1.02-1.05 x as with one rasterizer thread. Why not large ones: four concurrent
    LLM episodes at 512 px, whose frames are drawn one at a time under :func:`shared_gl`,
    spent 1.2-1.3 x as long per turn. Pixels are the same either way (docs/bridge.md,
    "Rasterizing in the caller's thread").
    """
    return "0" if frame_size < SMALL_FRAME else None


@contextmanager
def _without_sky(scene) -> Iterator[None]:
    """The scene's sky switched off for the ``with`` block."""
    import mujoco

    skybox = mujoco.mjtRndFlag.mjRND_SKYBOX
    shown = scene.flags[skybox]
    scene.flags[skybox] = 0
    try:
        yield
    finally:
        scene.flags[skybox] = shown


def _level(scene) -> bool:
    """Whether the scene's cameras look level (their up is +z), as the agent's eye does."""
    return all(camera.up[2] == 1.0 for camera in scene.camera)


def _has_glass(model) -> bool:
    """Whether ``model`` has a see-through geom the eye could see the sky through.

    Zones are left out: they lie on the floor, which is behind them wherever they show.
    """
    rgba = model.geom_rgba.copy()
    own_colour = np.all(rgba == _DEFAULT_RGBA, axis=1) & (model.geom_matid >= 0)
    rgba[own_colour] = model.mat_rgba[model.geom_matid[own_colour]]
    alpha, group = rgba[:, 3], model.geom_group
    seen = (group != GROUP_ZONE) & (group != GROUP_INVISIBLE) & (group != GROUP_AGENT)
    return bool(np.any(seen & (alpha > 0.0) & (alpha < 1.0)))


_gl_context = None
_gl_lock = threading.RLock()


@contextmanager
def shared_gl(frame_size: int | None = None) -> Iterator[None]:
    """Hold the process's OpenGL context, current in this thread, for the ``with`` block.

    The context is created on first use (``MUJOCO_GL`` picks EGL, OSMesa or GLFW) and
    released from the thread on exit, so another thread can take it next. ``frame_size``,
    the size of the frames the caller is about to draw, matters only then: Mesa reads
    ``LP_NUM_THREADS`` once, when the first context starts, so the first frames a process
    draws choose where it rasterizes (:func:`rasterizer_threads`) unless the process has set
    the variable itself.
    """
    global _gl_context
    with _gl_lock:
        if _gl_context is None:
            from mujoco.rendering.classic import gl_context

            threads = None if frame_size is None else rasterizer_threads(frame_size)
            if threads is not None:
                os.environ.setdefault("LP_NUM_THREADS", threads)

            _gl_context = gl_context.GLContext(_GL_SIZE, _GL_SIZE)
        with _gl_context.as_current():
            yield


class ArenaRenderer:
    """Draws one MuJoCo model, re-bindable to the next arena's model.

    Images of any size can be drawn; the offscreen buffer its ``MjrContext`` allocates
    starts at the model's ``offwidth`` x ``offheight`` and grows on demand.
    """

    def __init__(self) -> None:
        import mujoco

        self._mujoco = mujoco
        self._ctx = None
        self._scene = None
        self._model = None
        self._posed = None  # scratch MjData holding the poses of the state being drawn
        self._eye_option = mujoco.MjvOption()
        self._eye_option.geomgroup[GROUP_INVISIBLE] = 0
        self._eye_option.geomgroup[GROUP_AGENT] = 0  # the eye sits inside the agent's body
        self._overview_option = mujoco.MjvOption()
        self._overview_option.geomgroup[GROUP_INVISIBLE] = 0
        self._overview_option.geomgroup[GROUP_AGENT] = 1  # MuJoCo hides group 3 by default
        self._eye_camera = mujoco.MjvCamera()
        self._eye_camera.type = mujoco.mjtCamera.mjCAMERA_FIXED
        self._top_camera = mujoco.MjvCamera()
        self._top_camera.type = mujoco.mjtCamera.mjCAMERA_FREE
        self._top_camera.lookat[:] = (20.0, 20.0, 0.0)
        self._top_camera.elevation = -90.0
        self._top_camera.azimuth = 90.0  # Unity +z (MuJoCo +y) points up in the image
        self._top_camera.distance = 30.0
        # Orthographic, so walls do not lean outward; the free camera's extent is the
        # model's global fovy, read as metres (43 m: the arena plus its fence).
        self._top_camera.orthographic = 1
        self._skies: dict[int, tuple[np.ndarray, float]] = {}
        self._sky_picture_fits = False  # whether this model's frames may lay their sky in
        self.sky_laid_in = False
        """Whether the last eye frame this renderer drew got its sky from the picture."""

    def bind(self, model) -> None:
        """Upload ``model``'s assets; later draws show data of this model.

        The offscreen buffer starts at the model's ``offwidth`` (the scene sets it to the
        eye's resolution) and grows when a larger image is asked for: a 1024 px buffer
        for 512 px frames made every frame about 15% slower and every bind 6 ms slower.
        """
        self._model = model
        self._posed = self._mujoco.MjData(model)
        # Like the shadows below, chosen from the eye's size before the context builds the
        # meshes; the model's physics does not read these.
        quality = model.vis.quality
        quality.numslices, quality.numstacks = curve_tessellation(model.vis.global_.offwidth)
        self._make_context()
        self._scene = self._mujoco.MjvScene(model, maxgeom=model.ngeom + _SPARE_GEOMS)
        # Chosen once per model from the eye's size (the scene's offwidth), so a frame never
        # depends on whether a larger overview grew the buffer before it.
        self._scene.flags[self._mujoco.mjtRndFlag.mjRND_SHADOW] = int(
            draws_shadows(model.vis.global_.offwidth))
        self._eye_camera.fixedcamid = self._mujoco.mj_name2id(
            model, self._mujoco.mjtObj.mjOBJ_CAMERA, "eye")
        self._skies = {}
        # Multisampled frames blend the edges of objects with the cleared black, which a
        # sky laid in afterwards cannot undo (the depth is one sample's).
        self._sky_picture_fits = (not _has_glass(model)
                                  and model.vis.quality.offsamples == 0)

    def _make_context(self) -> None:
        mujoco = self._mujoco
        with shared_gl(self._model.vis.global_.offwidth):
            if self._ctx is not None:
                self._ctx.free()
            self._ctx = mujoco.MjrContext(self._model, mujoco.mjtFontScale.mjFONTSCALE_100)

    def _pose(self, data):
        """A copy of ``data``'s state with the world poses computed from its ``qpos``.

        Why: ``mj_step`` computes the poses (``xpos``, ``cam_xpos``...) *before* it integrates,
        so after a step they are one physics step behind ``qpos``: at 15 m/s the eye was drawn
        30 cm behind the agent. Recomputing them in ``data`` itself would change what the
        physics helpers read between steps, and rendering must not change the physics.
        """
        mujoco, posed = self._mujoco, self._posed
        posed.qpos[:] = data.qpos
        posed.mocap_pos[:] = data.mocap_pos
        posed.mocap_quat[:] = data.mocap_quat
        posed.time = data.time
        mujoco.mj_kinematics(self._model, posed)
        mujoco.mj_comPos(self._model, posed)
        mujoco.mj_camlight(self._model, posed)
        return posed

    def _ensure_buffer(self, size: int) -> None:
        """Grow the offscreen buffer (a new ``MjrContext``) if ``size`` does not fit."""
        visual = self._model.vis.global_
        if size > visual.offwidth or size > visual.offheight:
            visual.offwidth = visual.offheight = size
            self._make_context()

    def eye(self, data, size: int) -> np.ndarray:
        """The agent's first-person view, ``(size, size, 3)`` uint8.

        ``sky_laid_in`` says afterwards whether its sky came from the picture
        (:func:`lays_in_sky`) or was drawn.
        """
        self.sky_laid_in = False
        if lays_in_sky(size) and self._sky_picture_fits:
            return self._draw(data, size, self._eye_camera, self._eye_option, lay_in_sky=True)
        return self._draw(data, size, self._eye_camera, self._eye_option)

    def overview(self, data, size: int) -> np.ndarray:
        """A top-down view of the whole 40 x 40 arena, Unity +z up and +x right."""
        return self._draw(data, size, self._top_camera, self._overview_option)

    def _draw(self, data, size: int, camera, option, *, lay_in_sky: bool = False) -> np.ndarray:
        mujoco, scene = self._mujoco, self._scene
        if self._ctx is None:
            raise RuntimeError("renderer has no model: call bind() first")
        self._ensure_buffer(size)
        posed = self._pose(data)
        mujoco.mjv_updateScene(self._model, posed, option, None, camera,
                               mujoco.mjtCatBit.mjCAT_ALL, scene)
        rect = mujoco.MjrRect(0, 0, size, size)
        pixels = np.empty((size, size, 3), dtype=np.uint8)
        with shared_gl():
            # another simulator may have bound its own framebuffer since our last frame
            mujoco.mjr_setBuffer(mujoco.mjtFramebuffer.mjFB_OFFSCREEN, self._ctx)
            if not (lay_in_sky and _level(scene) and self._laid_in(rect, pixels)):
                mujoco.mjr_render(rect, scene, self._ctx)
                mujoco.mjr_readPixels(pixels, None, rect, self._ctx)
        return np.ascontiguousarray(pixels[::-1])

    def _laid_in(self, rect, pixels: np.ndarray) -> bool:
        """Draw the scene without its sky into ``pixels``, then fill the open sky from the picture.

        False (``pixels`` to be drawn again, sky and all) if something was drawn over the open
        sky: a transparent geom, through which the sky would have shown.
        """
        mujoco, scene, size = self._mujoco, self._scene, rect.width
        if size not in self._skies:
            self._skies[size] = self._sky_alone(rect)
        sky, cleared = self._skies[size]
        depth = np.empty((size, size), dtype=np.float32)
        with _without_sky(scene):
            mujoco.mjr_render(rect, scene, self._ctx)
        mujoco.mjr_readPixels(pixels, depth, rect, self._ctx)
        open_sky = np.equal(depth, cleared).reshape(-1)
        # One 3-byte item per pixel: masking these is ten times as fast as masking channels.
        drawn = pixels.reshape(-1).view("V3")
        if drawn[open_sky].view(np.uint8).any():  # cleared to black, then drawn over
            return False
        np.copyto(drawn, sky.reshape(-1).view("V3"), where=open_sky)
        self.sky_laid_in = True
        return True

    def _sky_alone(self, rect) -> tuple[np.ndarray, float]:
        """The sky as the eye sees it at heading 0, and the depth an empty pixel reads.

        Both as read from GL (MuJoCo maps the far end to 1 by default: read, not assumed).
        Drawn from the scene as last updated for this model (its cameras' frustum, the sky's
        distance), with the geoms left out and the cameras turned to face +y, level.
        """
        mujoco, scene = self._mujoco, self._scene
        size = rect.width
        sky = np.empty((size, size, 3), dtype=np.uint8)
        depth = np.empty((size, size), dtype=np.float32)
        ngeom = scene.ngeom
        poses = [(camera.forward.copy(), camera.up.copy()) for camera in scene.camera]
        scene.ngeom = 0
        for camera in scene.camera:
            camera.forward[:] = (0.0, 1.0, 0.0)
            camera.up[:] = (0.0, 0.0, 1.0)
        try:
            mujoco.mjr_render(rect, scene, self._ctx)
            mujoco.mjr_readPixels(sky, None, rect, self._ctx)
            with _without_sky(scene):
                mujoco.mjr_render(rect, scene, self._ctx)
            mujoco.mjr_readPixels(None, depth, rect, self._ctx)
        finally:
            scene.ngeom = ngeom
            for camera, (forward, up) in zip(scene.camera, poses, strict=True):
                camera.forward[:] = forward
                camera.up[:] = up
        return sky, float(depth.max())

    def close(self) -> None:
        """Free this renderer's GPU-side resources (the shared OpenGL context stays)."""
        if self._ctx is not None:
            with shared_gl():
                self._ctx.free()
            self._ctx = None
