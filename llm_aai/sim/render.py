"""Offscreen rendering: the agent's first-person eye and a top-down overview.

One OpenGL context lives as long as the simulator; each loaded arena only gets a fresh
``MjrContext`` (its textures and meshes on the GPU side) and ``MjvScene``. That keeps arena
rebuilds cheap and lets one process hold several simulators (each makes its context current
before drawing). Set ``LP_NUM_THREADS=1`` per process when running several at once on a CPU
(Mesa llvmpipe otherwise uses every core for every frame).
"""

from __future__ import annotations

import numpy as np

from llm_aai.sim.scene import GROUP_AGENT, GROUP_INVISIBLE

_MAX_GEOM = 4000


class ArenaRenderer:
    """Draws one MuJoCo model, re-bindable to the next arena's model.

    Args:
        buffer_size: the largest square image it will be asked for (must not exceed the
            model's ``offwidth``/``offheight``).
    """

    def __init__(self, buffer_size: int) -> None:
        import mujoco
        from mujoco.rendering.classic import gl_context

        self._mujoco = mujoco
        self._gl = gl_context.GLContext(buffer_size, buffer_size)
        self._gl.make_current()
        self._ctx = None
        self._scene = None
        self._model = None
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

    def bind(self, model) -> None:
        """Upload ``model``'s assets; later draws show data of this model."""
        mujoco = self._mujoco
        self._gl.make_current()
        if self._ctx is not None:
            self._ctx.free()
        self._model = model
        self._ctx = mujoco.MjrContext(model, mujoco.mjtFontScale.mjFONTSCALE_100)
        mujoco.mjr_setBuffer(mujoco.mjtFramebuffer.mjFB_OFFSCREEN, self._ctx)
        self._scene = mujoco.MjvScene(model, maxgeom=_MAX_GEOM)
        self._eye_camera.fixedcamid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_CAMERA, "eye")

    def eye(self, data, size: int) -> np.ndarray:
        """The agent's first-person view, ``(size, size, 3)`` uint8."""
        return self._draw(data, size, self._eye_camera, self._eye_option)

    def overview(self, data, size: int) -> np.ndarray:
        """A top-down view of the whole 40 x 40 arena, Unity +z up and +x right."""
        return self._draw(data, size, self._top_camera, self._overview_option)

    def _draw(self, data, size: int, camera, option) -> np.ndarray:
        mujoco = self._mujoco
        if self._ctx is None:
            raise RuntimeError("renderer has no model: call bind() first")
        if size > self._model.vis.global_.offwidth or size > self._model.vis.global_.offheight:
            raise ValueError(
                f"image size {size} exceeds the offscreen buffer "
                f"({self._model.vis.global_.offwidth}); build the scene with a larger resolution"
            )
        self._gl.make_current()
        mujoco.mjv_updateScene(self._model, data, option, None, camera,
                               mujoco.mjtCatBit.mjCAT_ALL, self._scene)
        rect = mujoco.MjrRect(0, 0, size, size)
        mujoco.mjr_render(rect, self._scene, self._ctx)
        pixels = np.empty((size, size, 3), dtype=np.uint8)
        mujoco.mjr_readPixels(pixels, None, rect, self._ctx)
        return np.ascontiguousarray(pixels[::-1])

    def close(self) -> None:
        """Free the GPU-side context and the OpenGL context."""
        if self._ctx is not None:
            self._gl.make_current()
            self._ctx.free()
            self._ctx = None
        if self._gl is not None:
            self._gl.free()
            self._gl = None
