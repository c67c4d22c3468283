r"""The real Animal-AI: a backend driving the Unity player through ``animalai``.

``UnityBackend`` wraps ``animalai.environment.AnimalAIEnvironment`` (which launches the Unity
executable and talks ML-Agents gRPC to it) behind the same ``Backend`` protocol as the
embedded simulator, so the same env, runner and scripts can be checked against the original.

Requirements: ``pip install 'llm-aai[unity]'``. The ``animalai`` 6.x wheels declare
``Requires-Python >= 3.14``, so on older Pythons that extra installs nothing and this backend
reports ``UnityUnavailable``. A Unity build is needed too: pass its executable as
``file_name``, or ``None`` to let ``animalai`` find one in ``./env*/`` or its cache
(``~/.animalai``) and otherwise download release v4.4.0 (about 400 MB; it asks first on a
terminal; ``ANIMALAI_AUTO_DOWNLOAD=0`` forbids it).

Behaviour worth knowing:

* Unity takes its seed at launch, so ``reset`` with a different seed relaunches the player
  (seconds); a new arena with the same seed is sent to the running player. ``AnimalAIEnv``
  draws a new seed per episode, so through it every episode gets a fresh player, which is
  also what the paper's harness did (one ``AnimalAIEnvironment`` per arena).
* AAI cycles through the arenas of a multi-arena file on every episode end; this backend
  plays the first arena after each ``reset``, like the embedded one.
* The camera image arrives as float in [0, 1], channels-last ``(H, W, 3)`` from older
  clients and channels-first ``(3, H, W)`` from ``mlagents-envs-aai`` 1.0; both become
  ``(H, W, 3)`` uint8. Health, velocity and position come from AAI's 7-float vector.

Integration test (needs a build; skipped otherwise)::

    LLM_AAI_UNITY_BUILD=/path/to/AAI/animalAI.x86_64 \\
        .venv/bin/python -m pytest tests/env/test_unity_backend.py -m unity

On a headless Linux machine run it under ``xvfb-run -a``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np

from llm_aai.env.backends.base import BackendStep, check_action

INSTALL_HINT = "pip install 'llm-aai[unity]'"
RELEASES = "https://github.com/Kinds-of-Intelligence-CFI/animal-ai/releases"


class UnityUnavailable(RuntimeError):
    """The unity backend cannot run here: package, Python version or Unity build missing."""


def _python() -> str:
    return ".".join(str(part) for part in sys.version_info[:3])


def _import_environment_class() -> type:
    try:
        from animalai.environment import AnimalAIEnvironment
    except ImportError as exc:
        if sys.version_info < (3, 14):
            why = (
                f"{INSTALL_HINT} needs Python >= 3.14 (animalai 6.x requires it); "
                f"this is Python {_python()}"
            )
        else:
            why = f"install it with {INSTALL_HINT}"
        raise UnityUnavailable(
            f"the unity backend needs the 'animalai' package ({exc}): {why}. "
            "The embedded backend needs neither."
        ) from exc
    return AnimalAIEnvironment


def camera_to_uint8(camera: Any) -> np.ndarray:
    """Convert a camera observation to ``(H, W, 3)`` uint8.

    Accepts channels-last ``(H, W, C)`` or channels-first ``(C, H, W)`` with C in {1, 3, 4},
    as float in [0, 1] or as uint8. One channel (grayscale) is repeated; a fourth (alpha) is
    dropped.

    Raises:
        ValueError: not a 3-D image with a recognisable channel axis.

    """
    image = np.asarray(camera)
    if image.ndim == 4 and image.shape[0] == 1:  # a batch of one agent
        image = image[0]
    if image.ndim != 3:
        raise ValueError(f"camera observation must be 3-D, got shape {image.shape}")
    if image.shape[0] in (1, 3, 4) and image.shape[-1] not in (1, 3, 4):
        image = np.moveaxis(image, 0, -1)
    elif image.shape[-1] not in (1, 3, 4):
        raise ValueError(f"no channel axis of size 1, 3 or 4 in camera shape {image.shape}")
    if image.shape[-1] == 1:
        image = np.repeat(image, 3, axis=-1)
    image = image[..., :3]
    if image.dtype == np.uint8:
        return np.ascontiguousarray(image)
    if not np.issubdtype(image.dtype, np.floating):
        raise ValueError(f"camera observation must be float in [0, 1] or uint8, got {image.dtype}")
    return np.ascontiguousarray(np.round(np.clip(image, 0.0, 1.0) * 255.0).astype(np.uint8))


def _vector_fields(vector: Any) -> tuple[float, tuple[float, ...], tuple[float, ...]]:
    """Split AAI's 7-float vector: health, local velocity (3), world position (3)."""
    values = np.asarray(vector, dtype=np.float64).reshape(-1)
    if values.size != 7:
        raise ValueError(f"AAI's vector observation has 7 floats, got {values.size}")
    return float(values[0]), tuple(map(float, values[1:4])), tuple(map(float, values[4:7]))


class UnityBackend:
    """The Unity Animal-AI player behind the ``Backend`` protocol.

    Args:
        file_name: the Unity executable, or None for ``animalai``'s own search and download.
        resolution: side of the square camera image (the paper used 512).
        worker_id: port offset; give each concurrent backend its own (port = base + id).
        base_port: first gRPC port.
        no_graphics: must stay False: the camera renders nothing without graphics.
        timeout: seconds to wait for the player at each exchange.
        log_folder: absolute folder for the Unity player's log ("" = none).
        **env_kwargs: passed to ``AnimalAIEnvironment`` as is (e.g. ``timescale``,
            ``additional_args``); not ``useCamera``, ``seed`` or the arena, which this class
            controls.

    Raises:
        UnityUnavailable: ``animalai`` is not importable, or ``file_name`` does not exist.
        ValueError: ``no_graphics=True`` or a controlled keyword in ``env_kwargs``.

    """

    simulates_in_process = False
    """The Unity player simulates the world in its own process."""

    _CONTROLLED = frozenset(
        {"arenas_configurations", "seed", "useCamera", "play", "resolution", "file_name",
         "worker_id", "base_port", "no_graphics"}
    )

    def __init__(
        self,
        file_name: str | Path | None = None,
        *,
        resolution: int = 512,
        worker_id: int = 0,
        base_port: int = 5005,
        no_graphics: bool = False,
        timeout: int | None = None,
        log_folder: str = "",
        **env_kwargs: Any,
    ) -> None:
        if no_graphics:
            raise ValueError("no_graphics=True leaves the camera empty; this backend needs it")
        clash = self._CONTROLLED & env_kwargs.keys()
        if clash:
            raise ValueError(f"UnityBackend sets these itself: {sorted(clash)}")
        self._environment_class = _import_environment_class()
        if file_name is not None and not Path(file_name).exists():
            raise UnityUnavailable(
                f"no Animal-AI Unity build at {file_name}: download one ('python -m animalai "
                f"download', or a release zip from {RELEASES}) and pass its executable, or "
                "pass file_name=None to use animalai's own cache and download"
            )
        self.file_name = None if file_name is None else str(file_name)
        self.resolution = int(resolution)
        self._kwargs = dict(
            worker_id=worker_id,
            base_port=base_port,
            no_graphics=False,
            log_folder=log_folder,
            timeout=timeout,
            **env_kwargs,
        )
        self._env: Any = None
        self._seed: int | None = None
        self._behavior: str | None = None
        self._image: np.ndarray | None = None
        self._done = True

    # -- Backend protocol ------------------------------------------------------------------

    def reset(self, arena_path: Path, seed: int) -> BackendStep:
        """Start the first arena of ``arena_path``; relaunch the player if ``seed`` changed."""
        path = Path(arena_path)
        if not path.is_file():
            raise FileNotFoundError(f"arena file not found: {path}")
        if self._env is None or seed != self._seed:
            self._launch(path.resolve(), int(seed))
        else:
            self._env.reset(str(path.resolve()))
        decision, _ = self._env.get_steps(self._behavior)
        if len(decision.reward) == 0:
            raise RuntimeError("the Unity player returned no agent after reset")
        self._done = False
        return self._perceive(decision.obs, 0.0, False, {})

    def step(self, move: int, turn: int, *, render: bool = True) -> BackendStep:
        """Send one action to the player and read what it returns.

        ``render`` is accepted for the protocol's sake: the player renders its camera on every
        decision whatever we ask, so the image is always there.
        """
        move, turn = check_action(move, turn)
        if self._env is None or self._done:
            raise RuntimeError("no episode running: call reset() first")
        action = self._env.behavior_specs[self._behavior].action_spec.empty_action(1)
        action.add_discrete(np.array([[move, turn]], dtype=np.int32))
        self._env.set_actions(self._behavior, action)
        self._env.step()
        decision, terminal = self._env.get_steps(self._behavior)
        if len(terminal.reward) > 0:
            self._done = True
            info = {"interrupted": bool(np.asarray(terminal.interrupted).reshape(-1)[0])}
            return self._perceive(terminal.obs, float(terminal.reward[0]), True, info)
        return self._perceive(decision.obs, float(decision.reward[0]), False, {})

    def close(self) -> None:
        """Stop the Unity player (leaving it running hangs the interpreter at exit)."""
        if self._env is not None:
            env, self._env = self._env, None
            env.close()
        self._done = True

    def __enter__(self) -> UnityBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- helpers ---------------------------------------------------------------------------

    def _launch(self, arena_path: Path, seed: int) -> None:
        self.close()
        try:
            self._env = self._environment_class(
                file_name=self.file_name,
                arenas_configurations=str(arena_path),
                seed=seed,
                resolution=self.resolution,
                useCamera=True,
                useRayCasts=False,
                play=False,
                **self._kwargs,
            )
        except FileNotFoundError as exc:
            # animalai raises this when its search and download found no executable.
            raise UnityUnavailable(f"animalai found no Unity build: {exc}") from exc
        self._seed = seed
        self._behavior = next(iter(self._env.behavior_specs))

    def _perceive(
        self, obs: list[Any], reward: float, done: bool, info: dict[str, Any]
    ) -> BackendStep:
        # Observation order is camera, then (if enabled) rays, then the 7-float vector.
        health, velocity, position = _vector_fields(obs[-1][0])
        image = camera_to_uint8(obs[0][0])
        info = {"position": position, "velocity": velocity, **info}
        self._image = image
        return BackendStep(image=image, health=health, reward=reward, done=done, info=info)

    def frame(self) -> np.ndarray:
        """The camera image of the last decision (the player sends one with every step)."""
        if self._image is None:
            raise RuntimeError("no episode running: call reset() first")
        return self._image
