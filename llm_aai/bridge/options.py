"""The player's settings, as ``animalai`` passes them on the Unity player's command line.

``AnimalAIEnvironment`` always writes ``--mlagents-port`` and its own flags
(``--playerMode``, ``--useCamera``, ``--resolution``...); ``mlagents_envs`` may add the
Unity-style ``-nographics -batchmode`` and ``-logFile PATH``. ``llm_aai.cli.bridge`` parses
them into ``PlayerOptions``; the defaults for a missing flag are the Unity player's own.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

RESOLUTION_MIN, RESOLUTION_MAX = 4, 512
"""The camera sizes the Animal-AI player accepts; it clamps others into this range."""
IDLE_TIMEOUT_ENV = "LLM_AAI_BRIDGE_IDLE_TIMEOUT"
"""Seconds the player waits for ``animalai``'s next input before it stops (``animalai``
writes the command line, so the environment is how a user sets it)."""
IDLE_TIMEOUT_DEFAULT = 1800.0
"""Half an hour: longer than any model call or training pause between two steps, short
enough that a client hung at exit (``mlagents_envs``' gRPC thread never ends when the
environment was not closed) does not keep a player alive for good."""
IDLE_TIMEOUT_MAX = 1e9
"""About 30 years: the longest wait gRPC takes (its deadline, in nanoseconds, overflows near
9.2e9 s, and a longer one fails the call at once, which once left animalai waiting for ever)."""
CONNECT_TIMEOUT = 60.0
"""Seconds to reach ``animalai``'s gRPC server, which starts before the player (as
``animalai``'s own default timeout)."""


@dataclass(frozen=True)
class PlayerOptions:
    """What one player process serves.

    Attributes:
        port: ``animalai``'s gRPC server port on localhost.
        player_mode: 1 = human play (the Unity player's default), 0 = driven by Python.
        use_camera: send the camera observation.
        resolution: side of the square camera image, clamped to 4-512.
        grayscale: one-channel camera observation.
        use_rays: send the ray perception vector.
        rays_per_side: rays on each side of the centre ray.
        ray_max_degrees: angle of the outermost rays from the centre one.
        decision_period: physics steps (0.02 s each) per decision.
        log_file: also write the player's log here (``-logFile``), like Unity's Player.log.
        no_graphics: ``-nographics`` was given (the camera is then empty in Unity).
        idle_timeout: seconds without an input from ``animalai`` after which the player
            stops (the Unity player would wait for ever).

    """

    port: int
    player_mode: int = 1
    use_camera: bool = False
    resolution: int = 84
    grayscale: bool = False
    use_rays: bool = False
    rays_per_side: int = 2
    ray_max_degrees: float = 60.0
    decision_period: int = 3
    log_file: Path | None = None
    no_graphics: bool = False
    idle_timeout: float = IDLE_TIMEOUT_DEFAULT

    def problems(self) -> list[str]:
        """Settings the player cannot serve, each as a sentence for the log."""
        found = []
        if not 1 <= self.port <= 65535:
            found.append(f"--mlagents-port {self.port} is not a TCP port")
        if self.decision_period < 1:
            found.append(f"--decisionPeriod {self.decision_period} must be at least 1")
        if self.rays_per_side < 0:
            found.append(f"--raysPerSide {self.rays_per_side} must be at least 0")
        if not 0 < self.idle_timeout <= IDLE_TIMEOUT_MAX:  # also refuses nan
            found.append(f"{IDLE_TIMEOUT_ENV}={self.idle_timeout} must be a positive number "
                         f"of seconds, at most {IDLE_TIMEOUT_MAX:g}")
        return found


def clamp_resolution(resolution: int) -> int:
    """The camera size the player really uses for a requested one (the Unity player clamps)."""
    return min(max(int(resolution), RESOLUTION_MIN), RESOLUTION_MAX)
