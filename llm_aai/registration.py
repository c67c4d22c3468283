"""Gymnasium ids for the Animal-AI env, registered by ``import llm_aai``.

One generic id takes the arena (and every other ``AnimalAIEnv`` argument) as keyword::

    import gymnasium
    import llm_aai  # registers the ids, as ``import minigrid`` does

    env = gymnasium.make("llm_aai/AnimalAI-v0", arena="01-04-03", resolution=128)

or, without importing first, ``gymnasium.make("llm_aai:llm_aai/AnimalAI-v0", ...)``
(gymnasium imports the module before the ``:``). Gymnasium >= 1.0 no longer reads the
``gymnasium.envs`` entry point, so importing ``llm_aai`` is what registers. This module sits
outside ``llm_aai.env`` and names the env by a string, so registering imports gymnasium
only: the env, the simulator and MuJoCo load when ``gymnasium.make`` first builds one.
"""

from __future__ import annotations

import gymnasium

ENV_ID = "llm_aai/AnimalAI-v0"


def register_envs() -> None:
    """Register the ids once (idempotent, so reloading modules does not warn)."""
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point="llm_aai.env.animalai_env:AnimalAIEnv")
