"""The run's settings, as the runner's library exports them: ``llm_aai.settings``.

They live in ``llm_aai.settings`` so that every reader of a run (analysis, re-simulation, the
viewer), which sits below the runner, reads them typed too; this module keeps the runner's
import path for library users (``from llm_aai.runner.config import RunConfig``).
"""

from llm_aai.settings import (
    MAX_RESOLUTION,
    MIN_RESOLUTION,
    ConfigError,
    ModelOptions,
    ResumeOverrides,
    RunConfig,
    default_run_id,
)

__all__ = ["MAX_RESOLUTION", "MIN_RESOLUTION", "ConfigError", "ModelOptions", "ResumeOverrides",
           "RunConfig", "default_run_id"]
