"""Animal-AI as a gymnasium environment, on the embedded simulator or the Unity player.

Importing this package registers ``llm_aai/AnimalAI-v0`` with gymnasium.
"""

from llm_aai.env.animalai_env import BACKENDS, AnimalAIEnv, resolve_arena
from llm_aai.env.backends import Backend, BackendStep
from llm_aai.env.registration import ENV_ID, register_envs

register_envs()

__all__ = [
    "BACKENDS",
    "ENV_ID",
    "AnimalAIEnv",
    "Backend",
    "BackendStep",
    "register_envs",
    "resolve_arena",
]
