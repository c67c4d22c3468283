"""Turn MuJoCo's silent recovery from a diverged simulation into a clear error.

When an acceleration, velocity or position becomes NaN, infinite or larger than 1e10,
``mj_step`` does not fail: it writes a line to MUJOCO_LOG.TXT, bumps a warning counter and
*resets the whole world to its initial state*. An episode would carry on from the spawn
positions as if nothing had happened, which is exactly the kind of silent fallback this
project refuses. The simulator therefore reads the counters after every physics step (a few
attribute reads, cheap next to a step) and raises ``SimulationUnstable`` naming the arena and
the object whose degree of freedom blew up.

The usual cause is a world MuJoCo cannot resolve in one step, e.g. two light bodies spawned
overlapping: the stiff contact pushes them apart at absurd speed within a few steps.
"""

from __future__ import annotations

from collections.abc import Callable

UNSTABLE_WARNINGS = ("mjWARN_BADQPOS", "mjWARN_BADQVEL", "mjWARN_BADQACC")
"""MuJoCo warnings after which it has reset the simulation."""


class SimulationUnstable(RuntimeError):
    """The physics diverged (MuJoCo reset the world); the episode cannot continue.

    Attributes:
        arena: the arena's file (or ``"<arena>"`` for one built in code).
        culprit: the object owning the degree of freedom MuJoCo reported.
        warning: MuJoCo's warning name, e.g. ``mjWARN_BADQACC``.
        time: simulated seconds since load when it happened.
    """

    def __init__(self, arena: str, culprit: str, warning: str, time: float) -> None:
        super().__init__(
            f"{arena}: the physics diverged ({warning}: NaN, Inf or huge value) at t = "
            f"{time:.2f} s, in {culprit}; MuJoCo reset the world, so the episode is void. "
            "Usual cause: bodies spawned overlapping."
        )
        self.arena, self.culprit, self.warning, self.time = arena, culprit, warning, time

    def __reduce__(self):
        """Rebuild from the four fields, so the error crosses process boundaries intact."""
        return (type(self), (self.arena, self.culprit, self.warning, self.time))


class StabilityWatch:
    """Watches one MuJoCo model/data pair for divergence.

    Args:
        model, data: the compiled arena and its state.
        arena: name used in errors (the arena's file).
        describe_body: maps a MuJoCo body id to a human-readable object description.
    """

    def __init__(self, model, data, arena: str, describe_body: Callable[[int], str]) -> None:
        import mujoco

        self._model, self._data = model, data
        self._arena = arena
        self._describe = describe_body
        self._unstable = [int(getattr(mujoco.mjtWarning, name)) for name in UNSTABLE_WARNINGS]
        self._names = {
            int(getattr(mujoco.mjtWarning, name)): name
            for name in dir(mujoco.mjtWarning)
            if name.startswith("mjWARN_")
        }

    def check(self, time: float) -> None:
        """Raise ``SimulationUnstable`` if MuJoCo flagged a divergence since load.

        Args:
            time: simulated seconds since load, for the message (MuJoCo's own clock was
                reset along with the world).
        """
        warning = self._data.warning
        for index in self._unstable:
            if warning[index].number:
                dof = int(warning[index].lastinfo)
                body = int(self._model.dof_bodyid[dof]) if 0 <= dof < self._model.nv else -1
                culprit = self._describe(body) if body >= 0 else "an unknown body"
                raise SimulationUnstable(self._arena, f"{culprit} (dof {dof})",
                                         self._names[index], time)

    def warnings(self) -> dict[str, int]:
        """Every MuJoCo warning raised since load, by name, with its count."""
        warning = self._data.warning
        return {name: int(warning[index].number) for index, name in sorted(self._names.items())
                if warning[index].number}
