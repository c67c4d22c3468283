"""The hook through which the simulator applies its corrections to MuJoCo's physics.

MuJoCo's soft contacts differ from PhysX (Unity) where Animal-AI's behaviour depends on it,
so a few modules finish every physics step the way PhysX would: the agent's movement
(``llm_aai.sim.agent_physics``), the floor friction of pushable bodies
(``llm_aai.sim.floor_friction``) and their friction against everything else
(``llm_aai.sim.pair_friction``). Each is a ``PhysicsCorrection``; the simulator keeps them in
a list, in the order they must run, and calls the same three hooks on each. Adding a
correction is one more entry in that list.

The contacts of a physics step are read from MuJoCo once, into a ``ContactRead`` that every
correction shares: each reads the columns it needs, converted to Python lists on first use
(plain floats are faster than numpy for the handful of contacts a step has).

Per-episode state: a correction is built anew by every ``Simulator.load``, and all it changes
between steps lives in its ``state`` attribute (a plain dataclass, ``copy.deepcopy``-able) plus
the MuJoCo arrays its docstring names. A snapshot of the simulator must carry both.
"""

from __future__ import annotations

from typing import Any, Protocol


class ContactRead:
    """One physics step's contacts, read from MuJoCo at most once and shared.

    Columns are read lazily, so a step in which no correction looks at a column pays nothing
    for it. ``new_step`` forgets the previous step's columns.

    Args:
        model, data: the compiled arena and its state.
        movers: degrees of freedom whose motion ``bodies_moving`` reports (the pushable
            bodies': while they all rest, the friction corrections skip their contact scans).
    """

    def __init__(self, model, data, movers) -> None:
        self._data = data
        self._movers = movers
        self.new_step(rescan=True)

    def new_step(self, *, rescan: bool = False) -> None:
        """Forget the last step's contacts (call after every ``mj_step``/``mj_forward``).

        Args:
            rescan: report ``bodies_moving`` as True whatever the velocities, so every
                correction reads its contacts (the episode's first read).
        """
        self._geoms = self._rows = self._forces = self._points = None
        self._frames = self._distances = self._excluded = None
        self._moving = True if rescan else None

    @property
    def count(self) -> int:
        """Number of contacts MuJoCo found."""
        return self._data.ncon

    @property
    def bodies_moving(self) -> bool:
        """Whether any of the ``movers`` degrees of freedom has a speed above 1e-6.

        Evaluated on first use in the step, after the corrections that ran before it (the
        agent's pushes change the pushed bodies' velocities).
        """
        if self._moving is None:
            self._moving = bool(len(self._movers)) and float(
                abs(self._data.qvel[self._movers]).max()) > MOVING_SPEED
        return self._moving

    @property
    def geoms(self) -> list[list[int]]:
        """Each contact's (geom1, geom2); MuJoCo's normal points from geom1 to geom2."""
        if self._geoms is None:
            self._geoms = self._data.contact.geom.tolist()
        return self._geoms

    @property
    def rows(self) -> list[int]:
        """Each contact's first constraint row (``efc_address``); -1 for no constraint."""
        if self._rows is None:
            self._rows = self._data.contact.efc_address.tolist()
        return self._rows

    @property
    def forces(self) -> list[float]:
        """Every constraint row's force (``efc_force``); a contact's normal force is at its row."""
        if self._forces is None:
            self._forces = self._data.efc_force.tolist()
        return self._forces

    @property
    def points(self) -> list[list[float]]:
        """Each contact's world position."""
        if self._points is None:
            self._points = self._data.contact.pos.tolist()
        return self._points

    @property
    def frames(self) -> list[list[float]]:
        """Each contact's frame (9 floats, the first three its unit normal)."""
        if self._frames is None:
            self._frames = self._data.contact.frame.tolist()
        return self._frames

    @property
    def distances(self) -> list[float]:
        """Each contact's signed distance (negative: penetration)."""
        if self._distances is None:
            self._distances = self._data.contact.dist.tolist()
        return self._distances

    @property
    def excluded(self) -> list[int]:
        """Each contact's ``exclude`` flag (1: inside the gap, no constraint)."""
        if self._excluded is None:
            self._excluded = self._data.contact.exclude.tolist()
        return self._excluded


MOVING_SPEED = 1e-6
"""Speed (m/s or rad/s) above which a degree of freedom counts as moving."""


class PhysicsCorrection(Protocol):
    """A change to MuJoCo's physics step, made before and after ``mj_step``.

    Attributes:
        state: everything the correction changes between steps (a dataclass); restoring a
            deep copy of it, with the MuJoCo state, restores the correction.
    """

    state: Any

    def start(self, contacts: ContactRead) -> None:
        """Read the world once it is built (after ``mj_forward``), before the first step."""

    def before_physics_step(self) -> None:
        """Write what MuJoCo must use in the coming step (velocities, bounds, forces)."""

    def after_physics_step(self, contacts: ContactRead) -> None:
        """Finish the step just taken and read what the next one needs from its contacts."""
