"""The paper's episode protocol, written once: start, the turn loop, the reply cap, the run-out.

Every component that plays an episode drives this package: the runner
(``llm_aai.runner.episode``, replies from an agent), playback (``llm_aai.playback``, replies
from a list), calibration (``llm_aai.calibration.fidelity``, the Unity recording's scripts)
and re-simulation (``llm_aai.replay.resimulate``, logged actions after the same start).

Public API:

* ``EpisodeProtocol`` / ``PAPER_PROTOCOL`` (``settings``): the numbers, the paper's by default.
* ``Episode`` (``episode``): the driver. ``start(seed=, arena=)`` resets the env and runs
  the initial observations; ``wants_reply`` says whether another reply is taken;
  ``play(reply) -> PlayedTurn`` plays one; ``run_out()`` steps no-ops to the end; ``totals``
  holds the running reward, steps, health, replies and how the episode ended.
* ``Control`` / ``ScriptControl`` / ``Decision`` (``control``): how a reply becomes actions
  or is refused with feedback.
* ``ObservationPolicy`` / ``LastFrame`` (``observation``): which frames go with the next
  message.
* Stepping primitives (``stepping``): ``start_episode``, ``run_initial_observations``,
  ``execute_actions``, ``execute_script``, ``StepOutcome``, ``InitialObservations``.

Where a mode plugs in (one piece each):

* per-action control (``action_control.ActionControl``): a reply picks one of AAI's 9
  actions, repeated up to ``MAX_REPEAT`` steps;
* frames during a script (``observe_every.EveryNSteps``): an ``ObservationPolicy`` cutting
  every N actions;
* no script cap: ``max_scripts=None``, with the ``max_replies`` guard in
  ``Episode.wants_reply``;
* one context across tasks (``across_tasks``): a trial's tasks in one conversation, in a
  stated order; each task stays an ``Episode`` (the runner carries the conversation);
* ``modes.ModeSettings`` names a run's control and observation policy (what the runner and
  re-simulation build); ``modes.mode_label`` names it for analysis;
* not yet: plan-then-act (a ``Control`` accepting a long plan, with ``max_scripts=1``) and
  text observations (the message builder's, ``llm_aai.prompts`` and the agents; the protocol
  passes observations through untouched).

The env is anything gymnasium-shaped (``StepEnv``); this package knows no agent, log or
backend.
"""

from llm_aai.protocol.control import Control, Decision, ScriptControl
from llm_aai.protocol.episode import Episode, PlayedTurn, Totals
from llm_aai.protocol.observation import LAST_FRAME, LastFrame, ObservationPolicy
from llm_aai.protocol.settings import PAPER_PROTOCOL, EpisodeProtocol
from llm_aai.protocol.stepping import (
    InitialObservations,
    Observation,
    StepEnv,
    StepOutcome,
    combine,
    execute_actions,
    execute_script,
    health_of,
    observe_now,
    run_initial_observations,
    start_episode,
)

__all__ = [
    "LAST_FRAME",
    "PAPER_PROTOCOL",
    "Control",
    "Decision",
    "Episode",
    "InitialObservations",
    "LastFrame",
    "Observation",
    "ObservationPolicy",
    "PlayedTurn",
    "EpisodeProtocol",
    "ScriptControl",
    "StepEnv",
    "StepOutcome",
    "Totals",
    "combine",
    "execute_actions",
    "execute_script",
    "health_of",
    "observe_now",
    "run_initial_observations",
    "start_episode",
]


_RENAMED = {"PaperProtocol": "EpisodeProtocol", "Turn": "PlayedTurn"}
"""Old names that still import, with a warning: old name -> new name (issue 34)."""


def __getattr__(name: str):
    """Resolve a renamed type by its old name, warning that the name is deprecated."""
    if name in _RENAMED:
        import warnings

        warnings.warn(f"llm_aai.protocol.{name} is deprecated: use {_RENAMED[name]}",
                      DeprecationWarning, stacklevel=2)
        return globals()[_RENAMED[name]]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
