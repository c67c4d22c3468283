"""Animal-AI as a gymnasium environment, on the embedded simulator or the Unity player.

``import llm_aai`` registers its gymnasium id, ``llm_aai/AnimalAI-v0`` (``llm_aai.registration``).
"""

from llm_aai.env.animalai_env import BACKENDS, AnimalAIEnv, resolve_arena
from llm_aai.env.backends import Backend, BackendStep
from llm_aai.registration import ENV_ID, register_envs

__all__ = [
    "BACKENDS",
    "ENV_ID",
    "AnimalAIEnv",
    "Backend",
    "BackendStep",
    "register_envs",
    "resolve_arena",
]
