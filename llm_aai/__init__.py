"""llm-aai: embody multimodal LLM agents in Animal-AI and measure their physical common sense."""

import os as _os

# MuJoCo picks its GL backend at import time; EGL renders headless on CPUs (Mesa llvmpipe).
# Set before anything imports mujoco so users never have to export it by hand.
_os.environ.setdefault("MUJOCO_GL", "egl")
_os.environ.setdefault("PYOPENGL_PLATFORM", _os.environ["MUJOCO_GL"])
# litellm otherwise downloads its model price map at import, retrying for seconds offline.
_os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

__version__ = "0.1.0"

from llm_aai.registration import register_envs as _register_envs  # noqa: E402 (after the env)

_register_envs()
