"""The control and sensing modes of a run: which ``Control`` and ``ObservationPolicy`` play.

The paper's mode is the default (``ModeSettings()``): scripts, one frame per script. The
others answer the questions the paper leaves open: per-action control (``control=
"action"``), frames during a script (``observe_every``, optionally joined into one
``filmstrip`` image), one conversation across the tasks of a trial (``context=
"across-tasks"``, in ``order``; see ``across_tasks``). The script cap and the reply guard are
protocol numbers (``EpisodeProtocol.max_scripts`` / ``max_replies``). A run's manifest records
these settings and ``mode_label`` names them for analysis, which never pools runs of different
modes.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

from llm_aai.protocol.across_tasks import CONTEXTS, ORDERS, PER_TASK, TESTBED_ORDER
from llm_aai.protocol.action_control import ActionControl
from llm_aai.protocol.control import Control, ScriptControl
from llm_aai.protocol.observation import LAST_FRAME, ObservationPolicy
from llm_aai.protocol.observe_every import EveryNSteps
from llm_aai.protocol.presets import ConfigError, Preset

__all__ = ["CONTROLS", "CONTROL_PRESETS", "RENAMED_CONTROLS", "ModeSettings", "PAPER_MODE",
           "mode_label"]

CONTROLS = ("script", "action")
RENAMED_CONTROLS = {"frame": "action"}
"""Old spellings of a control -> its name now ("frame" means a camera image, issue 34); read
from older manifests and accepted, with a note, from older commands."""
CONTROL_PRESETS = {
    "action": Preset("modes.control", "action", defaults={"protocol.max_scripts": None}),
}
"""Control -> what it brings: action control's replies are not scripts, so it has no script cap
(the episode is bounded by ``protocol.max_replies``)."""


@dataclass(frozen=True)
class ModeSettings:
    """How replies become actions and which frames the model sees.

    Attributes:
        control: ``"script"`` (the paper's Think/Go/Turn scripts) or ``"action"`` (one of
            AAI's 9 actions per reply, repeated up to ``action_control.MAX_REPEAT`` steps).
        observe_every: show a frame every N steps of a reply as well as the last one; None
            shows only the last (the paper).
        filmstrip: with ``observe_every``, join the frames taken during a reply into one
            labelled image, sent before the current view (bounds the image count to two).
        context: ``"per-task"`` (the paper: a conversation per task) or ``"across-tasks"``
            (the tasks of a trial in one conversation, each outcome told before the next).
        order: with ``"across-tasks"``, the tasks' order in a conversation: ``"testbed"`` (the
            run's task order) or ``"shuffled"`` (per trial, from the run seed).

    """

    control: str = "script"
    observe_every: int | None = None
    filmstrip: bool = False
    context: str = PER_TASK
    order: str = TESTBED_ORDER

    def __post_init__(self) -> None:
        if self.control in RENAMED_CONTROLS:  # an older caller's spelling: the same control
            warnings.warn(f"control={self.control!r} is deprecated: use "
                          f"{RENAMED_CONTROLS[self.control]!r}", DeprecationWarning, stacklevel=3)
            object.__setattr__(self, "control", RENAMED_CONTROLS[self.control])
        if self.control not in CONTROLS:
            raise ValueError(f"control must be one of {', '.join(CONTROLS)}, "
                             f"got {self.control!r}")
        if self.observe_every is not None and self.observe_every < 1:
            raise ValueError(f"observe_every must be >= 1, got {self.observe_every}")
        if self.filmstrip and self.observe_every is None:
            raise ConfigError("filmstrip", "joins the frames of {observe_every} N: give "
                                           "{observe_every}")
        if self.context not in CONTEXTS:
            raise ValueError(f"context must be one of {', '.join(CONTEXTS)}, "
                             f"got {self.context!r}")
        if self.order not in ORDERS:
            raise ValueError(f"order must be one of {', '.join(ORDERS)}, got {self.order!r}")
        if self.order != TESTBED_ORDER and self.context == PER_TASK:
            raise ConfigError("order", f"{self.order} orders the tasks of one conversation: "
                                       "give {context} across-tasks")

    @property
    def across_tasks(self) -> bool:
        """The tasks of a trial are played in one conversation."""
        return self.context != PER_TASK

    def make_control(self, script_mode: str = "strict", our_text: tuple[str, ...] = ()) -> Control:
        """The ``Control`` of this mode (``script_mode`` is strict or lenient reading).

        ``our_text``: what we send that shows commands (the feedback), so that lenient
        script reading refuses a copy of it (``ScriptControl``).
        """
        if self.control == "action":
            return ActionControl(script_mode)
        return ScriptControl(script_mode, our_text=our_text)

    def make_observations(self) -> ObservationPolicy:
        """The ``ObservationPolicy`` of this mode."""
        return LAST_FRAME if self.observe_every is None else EveryNSteps(self.observe_every)


PAPER_MODE = ModeSettings()


def mode_label(modes: ModeSettings, max_scripts: int | None) -> str:
    """A short name of a run's mode: ``"paper"`` for the paper's, else its parts joined by ``+``.

    Args:
        modes: the run's modes.
        max_scripts: the run's script cap (None: no cap).

    """
    parts = []
    if modes.control != "script":
        parts.append(f"{modes.control} control")
    if modes.observe_every is not None:
        parts.append(f"observe every {modes.observe_every}"
                     + (" filmstrip" if modes.filmstrip else ""))
    if modes.control == "script" and max_scripts is None:
        parts.append("no script cap")
    if modes.across_tasks:
        parts.append(f"context {modes.context}"
                     + ("" if modes.order == TESTBED_ORDER else f" {modes.order}"))
    return " + ".join(parts) if parts else "paper"
