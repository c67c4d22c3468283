"""The numbers of the paper's episode protocol, as data a run may vary and its manifest records.

The LLM-AAI harness (``LLM:src/experimentation/experiments/experiment1.py``; see
docs/animal-ai-facts.md §7) ran an episode as: reset, one no-op step, then three observations
for the model each followed by 16 no-op steps (48 in total, only at the start), then up to 30
scripts. After each script the observation is taken at once, with no waiting. A reply that
failed to parse cost one no-op step. When the model ran out of scripts the harness kept
stepping no-ops until the episode ended, so an agent could not bank health by stopping early.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass


@dataclass(frozen=True)
class EpisodeProtocol:
    """An episode's protocol as numbers: the paper's by default, plus guards it never had.

    The paper fixed the first six (``PAPER_PROTOCOL`` keeps its values); ``run_out_max_steps``
    and ``max_replies`` bound modes beyond the paper, which is why the type is not named after
    the paper (it was ``PaperProtocol`` until issue 34; that name still imports, with a
    ``DeprecationWarning``).

    A run's manifest records these fields by name (``config.protocol``) and re-simulation
    rebuilds them from it, so a field is added only with a default.

    Attributes:
        steps_after_reset: no-op steps between reset and the first observation.
        initial_observations: observations shown before the first script.
        noops_after_initial_observation: no-op steps after each initial observation.
        max_scripts: replies the model may send per episode; None sets no cap, leaving the
            end to whoever supplies the replies (``llm_aai.playback`` plays every script it is
            given, as the recording's 42 need).
        noops_after_invalid_script: no-op steps taken when a reply is refused (does not parse).
        run_out_clock: after the last reply, step no-ops until the episode ends.
        run_out_max_steps: bound on that run-out (an arena with t=0 never ends by itself).
        max_replies: a cost guard on replies for modes without the script cap (``--control
            frame``, ``--max-scripts 0``); None: no guard (the paper's cap is the bound).

    """

    steps_after_reset: int = 1
    initial_observations: int = 3
    noops_after_initial_observation: int = 16
    max_scripts: int | None = 30
    noops_after_invalid_script: int = 1
    run_out_clock: bool = True
    run_out_max_steps: int = 5000
    max_replies: int | None = None


PAPER_PROTOCOL = EpisodeProtocol()
"""The paper's protocol: every field at its default."""

_RENAMED = {"PaperProtocol": "EpisodeProtocol"}
"""Old names that still import, with a warning: old name -> new name (issue 34)."""


def __getattr__(name: str):
    """Resolve a renamed type by its old name, warning that the name is deprecated."""
    if name in _RENAMED:
        warnings.warn(f"llm_aai.protocol.{name} is deprecated: use {_RENAMED[name]}",
                      DeprecationWarning, stacklevel=2)
        return globals()[_RENAMED[name]]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
