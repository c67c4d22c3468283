"""A run's settings, one typed tree: what a run is asked to do and what it resolved to.

``RunConfig`` (``config``) is what a run is asked to do: every default and every rule between
fields, refused as a ``ConfigError`` naming the field. ``ResolvedRun`` (``resolved``) is the
config as the run plays it, with what resolving it found (tasks, prices, variants, a replayed
seed); the manifest stores it once, and ``settings_of`` / ``read_settings`` give it back typed
from a manifest of any version. This layer sits below every reader of a run (the runner,
analysis, re-simulation, the viewer), so none of them restates a default.
"""

from llm_aai.protocol.presets import ConfigError
from llm_aai.settings.config import (
    MAX_RESOLUTION,
    MIN_RESOLUTION,
    ModelOptions,
    ResumeOverrides,
    RunConfig,
    default_run_id,
)
from llm_aai.settings.resolved import ResolvedRun, episode_seed, read_settings, settings_of

__all__ = [
    "MAX_RESOLUTION",
    "MIN_RESOLUTION",
    "ConfigError",
    "ModelOptions",
    "ResolvedRun",
    "ResumeOverrides",
    "RunConfig",
    "default_run_id",
    "episode_seed",
    "read_settings",
    "settings_of",
]
