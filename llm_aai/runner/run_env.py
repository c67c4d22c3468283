"""The environment a run plays in, built from its config in one place.

The backend check before a run, every episode of the suite and of ``OpenRun``, and the dry
run's text probe build it here, so all of them play the same world.
"""

from __future__ import annotations

from llm_aai.env import AnimalAIEnv
from llm_aai.settings import RunConfig


def make_env(config: RunConfig) -> AnimalAIEnv:
    """A fresh env as ``config`` plays it, with its backend's own options.

    The embedded simulator takes its physics build; Unity takes the build file, when one is
    given.
    """
    kwargs = ({"file_name": config.unity_build}
              if config.backend == "unity" and config.unity_build is not None else None)
    if config.backend == "embedded":
        kwargs = {"physics_build": config.physics_build}
    return AnimalAIEnv(resolution=config.resolution, backend=config.backend,
                       arenas_dir=config.arenas_dir, backend_kwargs=kwargs)
