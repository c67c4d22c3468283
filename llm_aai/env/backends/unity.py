r"""The real Animal-AI: a backend driving the Unity player through ``animalai``.

``UnityBackend`` wraps ``animalai.environment.AnimalAIEnvironment`` (which launches the Unity
executable and talks ML-Agents gRPC to it) behind the same ``Backend`` protocol as the
embedded simulator, so the same env, runner and scripts can be checked against the original.
Its tests drive the real ``animalai`` 6.2.0 over the real wire, with ``llm_aai.bridge`` as the
player (``tests/env/test_unity_backend.py``).

Requirements: ``pip install 'llm-aai[unity]'``. The ``animalai`` 6.x wheels declare
``Requires-Python >= 3.14``; on older Pythons that extra installs nothing and this backend
reports ``UnityUnavailable`` (they do run on 3.11: ``make animalai`` installs them with
``--ignore-requires-python``). The player is ``file_name``, else ``$LLM_AAI_UNITY_BUILD``,
else ``animalai``'s own search of ``./env*/`` and ``~/.animalai`` (it then downloads build
v4.4.0, about 400 MB, unless ``ANIMALAI_AUTO_DOWNLOAD=0``). A path may leave out the
``.x86_64`` extension, as ``mlagents_envs`` allows.

Behaviour worth knowing:

* ``reset(arena, seed)`` always builds the world of ``arena``'s first arena placed with
  ``seed``, as the env contract says. The Unity player takes its seed only at launch, never
  reseeds, and moves to the next arena on every reset, so every reset launches a fresh
  player (seconds with Unity, about one with the bridge); a ``randomizeArenas`` file is
  sent as a copy holding its first arena only.
* Each backend gets its own gRPC port: ``worker_id=None`` (the default) takes the lowest id
  whose port ``base_port + id`` is free and no other backend of this process holds.
* ``check()`` launches the player once, so a missing build, a file that cannot run, a
  player that crashes or a busy port is one ``UnityUnavailable`` before anything is written.
* Several agents (a 4.4 multi-agent arena) are refused; so are seeds outside the player's
  int32 and keyword arguments ``AnimalAIEnvironment`` does not take.
* ``mlagents-envs-aai`` returns the camera channels first, ``(1, 3, R, R)`` float in [0, 1];
  it becomes ``(R, R, 3)`` uint8. Health, velocity and position come from AAI's 7 floats.

Integration test against a real Unity build (skipped otherwise)::

    LLM_AAI_UNITY_BUILD=/path/to/AAI/animalAI.x86_64 \\
        .venv/bin/python -m pytest tests/env/test_unity_backend.py -m unity

On a headless Linux machine run it under ``xvfb-run -a``.
"""

from __future__ import annotations

import inspect
import os
import socket
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

import numpy as np

from llm_aai.arena.agents import refuse_several_agents
from llm_aai.arena.yaml_io import dump_config, load_config
from llm_aai.env.backends.base import BackendStep, check_action

INSTALL_HINT = "pip install 'llm-aai[unity]'"
RELEASES = "https://github.com/Kinds-of-Intelligence-CFI/animal-ai/releases"
BUILD_ENV = "LLM_AAI_UNITY_BUILD"
"""Environment variable naming the Unity executable when ``file_name`` is not given."""
SEED_RANGE = (-(2**31), 2**31)
"""The player's seed is an int32 on the wire."""


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
                f"this is Python {_python()} (or install it with pip's "
                "--ignore-requires-python, as `make animalai` does)"
            )
        else:
            why = f"install it with {INSTALL_HINT}"
        raise UnityUnavailable(
            f"the unity backend needs the 'animalai' package ({exc}): {why}. "
            "The embedded backend needs neither."
        ) from exc
    return AnimalAIEnvironment


def camera_to_uint8(camera: Any) -> np.ndarray:
    """Convert ``mlagents-envs-aai``'s camera observation to ``(H, W, 3)`` uint8.

    The observation is channels first, ``(C, H, W)`` (or a batch of one agent,
    ``(1, C, H, W)``), C = 3 or 1 (grayscale, repeated), float in [0, 1].

    Raises:
        ValueError: any other shape or type.

    """
    image = np.asarray(camera)
    if image.ndim == 4 and image.shape[0] == 1:
        image = image[0]
    if image.ndim != 3 or image.shape[0] not in (1, 3):
        raise ValueError(f"camera observation must be (C, H, W) with C = 1 or 3, as "
                         f"mlagents-envs-aai returns it; got shape {image.shape}")
    if not np.issubdtype(image.dtype, np.floating):
        raise ValueError(f"camera observation must be float in [0, 1], got {image.dtype}")
    image = np.moveaxis(image, 0, -1)
    if image.shape[-1] == 1:
        image = np.repeat(image, 3, axis=-1)
    return np.ascontiguousarray(np.round(np.clip(image, 0.0, 1.0) * 255.0).astype(np.uint8))


def _vector_fields(vector: Any) -> tuple[float, tuple[float, ...], tuple[float, ...]]:
    """Split AAI's 7-float vector: health, local velocity (3), world position (3)."""
    values = np.asarray(vector, dtype=np.float64).reshape(-1)
    if values.size != 7:
        raise ValueError(f"AAI's vector observation has 7 floats, got {values.size}")
    return float(values[0]), tuple(map(float, values[1:4])), tuple(map(float, values[4:7]))


def resolve_build(file_name: str | Path) -> str:
    """The executable ``mlagents_envs`` would launch for ``file_name``, checked to be runnable.

    Raises:
        UnityUnavailable: nothing there (with or without ``.x86_64``), or not executable.

    """
    from mlagents_envs.env_utils import validate_environment_path

    launch = validate_environment_path(str(file_name))
    if launch is None or not os.path.isfile(launch):
        raise UnityUnavailable(
            f"no Animal-AI Unity build at {file_name} (also tried it with .x86_64 and .x86): "
            f"download one ('python -m animalai download', or a release zip from {RELEASES}), "
            f"or serve the embedded simulator with `python -m llm_aai.bridge install DIR`, "
            f"and pass the executable (or set {BUILD_ENV})")
    if not os.access(launch, os.X_OK):
        raise UnityUnavailable(f"the Unity build {launch} is not executable: chmod +x it")
    return launch


class _Ports:
    """Worker ids held by this process's backends, so concurrent ones never share a port."""

    _lock = threading.Lock()
    _held: set[int] = set()

    @classmethod
    def take(cls, base_port: int) -> int:
        with cls._lock:
            worker_id = 0
            while worker_id in cls._held or not _port_free(base_port + worker_id):
                worker_id += 1
                if base_port + worker_id > 65535:
                    raise UnityUnavailable(f"no free port from {base_port} up")
            cls._held.add(worker_id)
            return worker_id

    @classmethod
    def give_back(cls, worker_id: int) -> None:
        with cls._lock:
            cls._held.discard(worker_id)


def _port_free(port: int) -> bool:
    """Whether ``animalai`` could bind ``port`` (its own check: localhost, SO_REUSEADDR)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("localhost", port))
        except OSError:
            return False
    return True


class UnityBackend:
    """The Unity Animal-AI player behind the ``Backend`` protocol.

    Args:
        file_name: the Unity executable (``.x86_64`` may be left out); None for
            ``$LLM_AAI_UNITY_BUILD``, else ``animalai``'s own search and download.
        resolution: side of the square camera image (the paper used 512).
        worker_id: port offset (port = base + id); None picks a free one.
        base_port: first gRPC port.
        no_graphics: must stay False: the camera renders nothing without graphics.
        timeout: seconds to wait for the player at each exchange.
        log_folder: absolute folder for the Unity player's log ("" = none).
        **env_kwargs: other ``AnimalAIEnvironment`` arguments (e.g. ``timescale``,
            ``additional_args``); not the ones this class sets itself.

    Raises:
        UnityUnavailable: ``animalai`` is not importable, or the build is missing or cannot run.
        ValueError: ``no_graphics=True``, or a keyword ``AnimalAIEnvironment`` does not take or
            this class sets.

    """

    simulates_in_process = False
    """The Unity player simulates the world in its own process."""

    _CONTROLLED = frozenset(
        {"arenas_configurations", "seed", "useCamera", "play", "resolution", "file_name",
         "worker_id", "base_port", "no_graphics", "useRayCasts"}
    )

    def __init__(
        self,
        file_name: str | Path | None = None,
        *,
        resolution: int = 512,
        worker_id: int | None = None,
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
        known = set(inspect.signature(self._environment_class.__init__).parameters) - {"self"}
        unknown = sorted(env_kwargs.keys() - known)
        if unknown:
            raise ValueError(f"AnimalAIEnvironment takes no argument(s) {unknown}; it takes "
                             f"{sorted(known - self._CONTROLLED)}")
        if file_name is None and os.environ.get(BUILD_ENV):
            file_name = os.environ[BUILD_ENV]
        self.file_name = None if file_name is None else resolve_build(file_name)
        self.resolution = int(resolution)
        self.base_port = int(base_port)
        self._fixed_worker = worker_id
        self._worker: int | None = None
        self._kwargs = dict(base_port=base_port, no_graphics=False, log_folder=log_folder,
                            timeout=timeout, **env_kwargs)
        self._env: Any = None
        self._behavior: str | None = None
        self._image: np.ndarray | None = None
        self._done = True
        self._scratch = tempfile.TemporaryDirectory(prefix="llm-aai-unity-")

    @property
    def port(self) -> int | None:
        """The gRPC port of the running player (None when none runs)."""
        return None if self._worker is None else self.base_port + self._worker

    # -- Backend protocol ------------------------------------------------------------------

    def check(self) -> None:
        """Launch the player once with no arena and close it: proof that it runs here.

        Raises:
            UnityUnavailable: no build, not executable, the player crashed or timed out, or
                the port is taken.

        """
        self._launch("", 0)
        self.close()

    def reset(self, arena_path: Path, seed: int) -> BackendStep:
        """Start the first arena of ``arena_path`` placed with ``seed`` (a fresh player).

        Raises:
            FileNotFoundError: no such arena file.
            ArenaError: not a valid arena file, or a multi-agent one.
            ValueError: a seed outside the player's int32.
            UnityUnavailable: the player could not be launched.

        """
        path = Path(arena_path)
        if not path.is_file():
            raise FileNotFoundError(f"arena file not found: {path}")
        seed = int(seed)
        if not SEED_RANGE[0] <= seed < SEED_RANGE[1]:
            raise ValueError(f"seed {seed} does not fit the Unity player's 32-bit seed; "
                             f"use a seed from -2**31 to 2**31 - 1")
        config = load_config(path)
        refuse_several_agents(config, who="the unity backend")
        self._launch(self._first_arena_file(path.resolve(), config), seed)
        decision, _ = self._env.get_steps(self._behavior)
        self._check_one_agent(len(decision))
        self._done = False
        return self._perceive(decision.obs, 0.0, False, {})

    def step(self, move: int, turn: int, *, render: bool = True) -> BackendStep:
        """Send one action to the player and read what it returns.

        ``render`` is accepted for the protocol's sake: the player renders its camera on every
        decision whatever we ask, so the image is always there.
        """
        from mlagents_envs.base_env import ActionTuple

        move, turn = check_action(move, turn)
        if self._env is None or self._done:
            raise RuntimeError("no episode running: call reset() first")
        self._env.set_actions(self._behavior,
                              ActionTuple(discrete=np.array([[move, turn]], dtype=np.int32)))
        self._env.step()
        decision, terminal = self._env.get_steps(self._behavior)
        if len(terminal) > 0:
            self._check_one_agent(len(terminal))
            self._done = True
            info = {"interrupted": bool(np.asarray(terminal.interrupted).reshape(-1)[0])}
            return self._perceive(terminal.obs, float(terminal.reward[0]), True, info)
        self._check_one_agent(len(decision))
        return self._perceive(decision.obs, float(decision.reward[0]), False, {})

    def close(self) -> None:
        """Stop the Unity player (leaving it running hangs the interpreter at exit)."""
        if self._env is not None:
            env, self._env = self._env, None
            env.close()
        if self._worker is not None and self._fixed_worker is None:
            _Ports.give_back(self._worker)
        self._worker = None
        self._done = True

    def __enter__(self) -> UnityBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- helpers ---------------------------------------------------------------------------

    def _first_arena_file(self, path: Path, config) -> str:
        """A file whose first episode is ``config``'s first arena on a fresh player."""
        if not config.randomize_arenas:
            return str(path)  # a fresh player starts with the first arena in id order
        import dataclasses


        first = dataclasses.replace(config, arenas=((config.first_id, config.arena()),),
                                    randomize_arenas=False)
        copy = Path(self._scratch.name) / f"first-arena-of-{path.name}"
        copy.write_text(dump_config(first, spelling="new"), encoding="utf-8")
        return str(copy)

    def _launch(self, arena: str, seed: int) -> None:
        from animalai.download import DownloadError
        from mlagents_envs.exception import UnityException

        self.close()
        if self._fixed_worker is not None and not _port_free(self.base_port + self._fixed_worker):
            # animalai would fail the same way, after registering an exit hook that then fails
            raise UnityUnavailable(self._busy_message(self.base_port + self._fixed_worker))
        self._worker = (self._fixed_worker if self._fixed_worker is not None
                        else _Ports.take(self.base_port))
        port = self.port
        where = f"the Unity player {self.file_name or '(found by animalai)'} on port {port}"
        try:
            self._env = self._built(
                file_name=self.file_name, arenas_configurations=arena, seed=seed,
                resolution=self.resolution, useCamera=True, useRayCasts=False, play=False,
                worker_id=self._worker, **self._kwargs)
        except UnityException as exc:  # busy port, launch failure, crash, timeout, version
            self.close()
            name = type(exc).__name__
            if name == "UnityWorkerInUseException":
                raise UnityUnavailable(self._busy_message(port)) from exc
            raise UnityUnavailable(f"{where} failed: {name}: {exc}") from exc
        except FileNotFoundError as exc:  # animalai's search found no build
            self.close()
            raise UnityUnavailable(f"animalai found no Unity build: {exc}") from exc
        except DownloadError as exc:
            self.close()
            raise UnityUnavailable(f"animalai could not download a Unity build: {exc}; "
                                   f"pass a build or set {BUILD_ENV}") from exc
        except OSError as exc:
            self.close()
            raise UnityUnavailable(f"{where} could not start: {exc}") from exc
        behaviors = list(self._env.behavior_specs)
        if not behaviors:
            self.close()
            raise UnityUnavailable(f"{where} reported no agent behaviour after reset")
        if len(behaviors) > 1:
            self.close()
            raise UnityUnavailable(f"{where} reported {len(behaviors)} behaviours {behaviors}: "
                                   "multi-agent arenas are not supported by the unity backend")
        self._behavior = behaviors[0]

    def _built(self, **kwargs: Any) -> Any:
        """An ``AnimalAIEnvironment``, closed again if its constructor fails.

        Its constructor launches the player, shakes hands and then resets it; when that reset
        fails (a timeout: the player never answered) the exception leaves the half-built
        environment unreachable, its player process running. Built in two steps so that it
        can be closed; an error while closing it is added to the constructor's as a note.
        """
        cls = self._environment_class
        env = cls.__new__(cls)
        try:
            env.__init__(**kwargs)
        except BaseException as exc:
            try:
                env.close()
            except Exception as close_error:  # half-built: some attributes may be missing
                exc.add_note(f"closing the half-built environment also failed: "
                             f"{type(close_error).__name__}: {close_error}")
            raise
        return env

    def _busy_message(self, port: int) -> str:
        return (f"port {port} is in use by another program (worker_id {self._fixed_worker}); "
                "pick another worker_id, or leave it None to take a free one")

    def _check_one_agent(self, count: int) -> None:
        if count != 1:
            raise RuntimeError(f"the Unity player reported {count} agents; the unity backend "
                               "plays exactly one (multi-agent arenas are not supported)")

    def _perceive(
        self, obs: list[Any], reward: float, done: bool, info: dict[str, Any]
    ) -> BackendStep:
        # Observation order is camera, then the 7-float vector (rays are off).
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
