"""What a study plays: its tasks, their order per participant, and each participant's run.

A study is one ``serve`` of the app: a selection of tasks (testbed or variants), the world
settings every participant plays them in, and where the runs go. Each participant and
interface gets one ordinary run (``open_run``) whose manifest names the agent ``human`` with the
participant's id, the interface and the order played, so ``analyze``, ``replay`` and ``view``
read adults' runs as they read a model's.
"""

from __future__ import annotations

import dataclasses
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llm_aai.agents.registry import AgentSpec
from llm_aai.protocol import EpisodeProtocol
from llm_aai.protocol.modes import ModeSettings
from llm_aai.runner import RunConfig, RunError
from llm_aai.runner.app import OpenRun, open_run, resolve_tasks

__all__ = ["INTERFACES", "KEYS_MAX_REPLIES", "ORDERS", "Study", "StudyError",
           "check_participant_id"]

INTERFACES = ("script", "keys")
"""``script``: the LLMs' Think/Go/Turn scripts, 30 an episode; ``keys``: the children's arrow
keys, one AAI step at a time in real time (the run's ``--control action``)."""

ORDERS = ("fixed", "shuffled")
"""``fixed``: every participant plays the tasks in id order; ``shuffled``: in an order drawn
from the study's seed and the participant's id (the same participant, the same order)."""

KEYS_MAX_REPLIES = 2000
"""The reply guard of keyboard episodes (one reply per step): above the 1,667 steps of the
longest testbed episode (t = 1000), so it ends only an arena that sets no time limit."""

AGENT = "human"
"""The agent name in the manifest: the same built-in ``human`` agent (a person choosing the
replies), here through the browser instead of the terminal."""

_PARTICIPANT = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")


class StudyError(ValueError):
    """A setting of the study or a participant's entry that cannot be used (said in one line)."""


def check_participant_id(text: str) -> str:
    """The participant id, which names the run's folder.

    Raises:
        StudyError: not 1 to 64 letters, digits, ``-`` or ``_`` (starting with a letter or
            digit).

    """
    participant = text.strip()
    if not _PARTICIPANT.fullmatch(participant):
        raise StudyError("the participant id must be 1 to 64 letters, digits, '-' or '_', "
                         "starting with a letter or digit")
    return participant


@dataclass(frozen=True)
class Study:
    """The tasks and settings of one served study.

    Attributes:
        tasks: the task ids, in id order (``select_tasks``), or the variants' ids.
        out: the folder each participant's run is made in.
        base: the run settings every participant shares (arenas, seed, frames, build).
        order: ``fixed`` or ``shuffled`` (see ``ORDERS``).

    """

    tasks: tuple[str, ...]
    out: Path
    base: RunConfig
    order: str = "fixed"

    @classmethod
    def create(cls, *, out: Path, tasks: str | None = None, level: str | None = None,
               arenas_dir: Path | None = None, full_testbed: bool = False, seed: int = 0,
               resolution: int = RunConfig.resolution, order: str = "fixed",
               variants: Path | None = None) -> Study:
        """Check the selection and every arena file before anyone plays.

        Args:
            out: where the runs go.
            tasks: task ids (``01-04-03,02-02-01``); None: all of the selection.
            level: levels (``1-3,7``); None: all.
            arenas_dir: the testbed's arena files (None: ``$LLM_AAI_ARENAS`` or the cache).
            full_testbed: choose from all 900 tasks, not the children's 40.
            seed: every participant's run seed (the same worlds for all).
            resolution: frame size in pixels.
            order: ``fixed`` or ``shuffled``.
            variants: a folder of ``variants make``: play the kept variants of the selected
                tasks instead (as ``run --variants``).

        Raises:
            StudyError: an unknown task or level, a missing or malformed arena file, a bad
                setting; the message names it.

        """
        if order not in ORDERS:
            raise StudyError(f"order must be one of {', '.join(ORDERS)}, got {order!r}")
        try:
            base = RunConfig(model=AGENT, tasks=tasks, level=level, full_testbed=full_testbed,
                             seed=seed, resolution=resolution,
                             arenas_dir=None if arenas_dir is None else arenas_dir.resolve(),
                             variants=None if variants is None else variants.resolve())
            chosen, _, _ = resolve_tasks(base)
        except (RunError, ValueError) as error:
            raise StudyError(str(error)) from error
        return cls(tuple(task.task_id for task in chosen), Path(out), base, order)

    def order_for(self, participant: str) -> tuple[str, ...]:
        """The tasks in the order ``participant`` plays them."""
        if self.order == "fixed":
            return self.tasks
        shuffled = list(self.tasks)
        random.Random(f"{self.base.seed}:{participant}").shuffle(shuffled)
        return tuple(shuffled)

    def run_dir(self, participant: str, interface: str) -> Path:
        """Where the run of ``participant`` under ``interface`` is written."""
        return self.out / f"{AGENT}-{interface}-{participant}"

    def config(self, interface: str) -> RunConfig:
        """The run settings of ``interface``: the paper's protocol, or the keyboard's steps.

        Keyboard episodes are frame-control runs (one AAI action per reply) with no script
        cap, so ``analyze`` labels them by their mode and never pools them with scripts.
        """
        if interface not in INTERFACES:
            raise StudyError(f"interface must be one of {', '.join(INTERFACES)}, "
                             f"got {interface!r}")
        if interface == "script":
            return self.base
        return dataclasses.replace(
            self.base, modes=ModeSettings(control="action"),
            protocol=dataclasses.replace(EpisodeProtocol(), max_scripts=None,
                                         max_replies=KEYS_MAX_REPLIES))

    def open(self, participant: str, interface: str) -> OpenRun:
        """Open the participant's run for play: made now (its manifest written), or continued.

        A participant whose run exists (a session taken over, a server restarted) goes on
        with the levels not yet finished; the run must be this study's (the same tasks and
        settings), or it is refused.

        Raises:
            StudyError: the run has every level finished already, or is another study's.

        """
        run_dir = self.run_dir(participant, interface)
        order = self.order_for(participant)
        options: dict[str, Any] = {"participant": participant, "interface": interface,
                                   "order": ",".join(order)}
        agent = AgentSpec(AGENT, "builtin", options, _played_in_the_browser)
        try:
            run = open_run(self.config(interface), run_dir, agent=agent, resume=True)
        except RunError as error:
            raise StudyError(str(error)) from error
        if all(run.finished(task_id, 1) is not None for task_id in order):
            run.close()
            raise StudyError(f"participant {participant} has played every level under the "
                             f"{interface} interface already ({run_dir.name}); give another id")
        return run


def _played_in_the_browser(**_: Any):
    raise RuntimeError("a study's participant plays in the browser; the app makes its agent")
