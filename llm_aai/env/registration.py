"""Gymnasium ids for the Animal-AI env.

One generic id takes the arena (and every other ``AnimalAIEnv`` argument) as keyword::

    import llm_aai.env  # registers the ids
    env = gymnasium.make("llm_aai/AnimalAI-v0", arena="arenas/x.yaml", resolution=128)

or, without importing first, ``gymnasium.make("llm_aai.env:llm_aai/AnimalAI-v0", ...)``
(gymnasium imports the module before the ``:``). Gymnasium >= 1.0 no longer reads the
``gymnasium.envs`` entry point, so importing ``llm_aai.env`` is what registers.
"""

from __future__ import annotations

import gymnasium

ENV_ID = "llm_aai/AnimalAI-v0"


def register_envs() -> None:
    """Register the ids once (idempotent, so reloading modules does not warn)."""
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point="llm_aai.env.animalai_env:AnimalAIEnv")
