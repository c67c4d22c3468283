"""The run library: evaluate an agent on testbed tasks, resumably, without a command line.

``start_run(RunConfig(...))`` and ``resume_run(run_dir, ResumeOverrides(...))`` (``app``) are
the entry points; the settings they take and record are ``llm_aai.settings``'s (``RunConfig``,
re-exported here and from ``config``); ``presets`` applies what the chosen agent, control and
prompt declare; ``suite`` schedules the episodes of a run on an ``executor`` and logs them;
``episode`` plays one episode under the paper's protocol. What a run writes, and the one reader
of its manifest, are in ``llm_aai.logs``; its settings are read back typed with
``llm_aai.settings.read_settings``.
"""

from llm_aai.runner.app import (
    RESULTS_DIR,
    RunError,
    RunInterrupted,
    RunOutcome,
    estimate_run,
    resume_run,
    run_config_of,
    start_run,
)
from llm_aai.runner.config import ModelOptions, ResumeOverrides, RunConfig, default_run_id

__all__ = [
    "RESULTS_DIR",
    "ModelOptions",
    "ResumeOverrides",
    "RunConfig",
    "RunError",
    "RunInterrupted",
    "RunOutcome",
    "default_run_id",
    "estimate_run",
    "resume_run",
    "run_config_of",
    "start_run",
]
