"""``AnimalAIEnv``: Animal-AI as a gymnasium environment, on any backend.

The contract, to the letter of gymnasium's ``Env``:

* ``action_space``: ``MultiDiscrete([3, 3])``, AAI's two branches: move (0 none, 1 forward,
  2 back) and turn (0 none, 1 right, 2 left). One step = one AAI decision (0.06 s).
* ``observation_space``: ``Dict(image=Box(0, 255, (R, R, 3), uint8), health=Box(0, 100,
  (1,), float32))``: what the agent perceives, nothing more.
* ``reset(*, seed=None, options=None)``: ``seed`` reseeds ``np_random``, from which each
  episode's world seed is drawn (so ``reset(seed=s)`` always builds the same world and
  ``reset()`` afterwards continues the sequence). ``options={"arena": path_or_task_id}``
  switches arena, reusing the backend (renderer, Unity player).
* ``step``: ``terminated`` is AAI's own episode end (goal, death zone, red ball, health run
  out; running out of time drains health, so it is a termination too). ``truncated`` is
  always False here; add ``gymnasium.wrappers.TimeLimit`` (or ``max_episode_steps`` in
  ``gymnasium.make``) for an outside step budget.
* ``info``: for analysis only (the agent must not use it): ``position`` and ``velocity``
  (see ``llm_aai.env.backends.base``), plus backend extras such as the reward ``events``.
* ``render_mode`` is fixed at construction: ``None`` or ``"rgb_array"``, which returns the
  first-person frame or (``render_view="overview"``, embedded backend) a top-down view.

Arenas are named by a YAML path or a testbed task ID (``"01-04-03"``), looked up in
``arenas_dir``, ``$LLM_AAI_ARENAS`` or the testbed cache (see ``llm_aai.arena.catalog``).
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding

from llm_aai.arena.catalog import resolve_arena_path
from llm_aai.env.backends.base import HEALTH_MAX, Backend, BackendStep
from llm_aai.env.backends.embedded import EmbeddedBackend
from llm_aai.env.backends.unity import UnityBackend

TASK_ID = re.compile(r"\d{2}-\d{2}-\d{2}")
ID_LIKE = re.compile(r"[\d-]+")
"""What a task ID's typo looks like (``01-04-3``, ``1-4-3``), rather than a file's name."""
RENDER_VIEWS = ("first_person", "overview")


def _embedded(resolution: int, **kwargs: Any) -> Backend:
    return EmbeddedBackend(resolution, **kwargs)


def _unity(resolution: int, **kwargs: Any) -> Backend:
    return UnityBackend(resolution=resolution, **kwargs)


BACKENDS: dict[str, Callable[..., Backend]] = {"embedded": _embedded, "unity": _unity}
"""Backend factories by name: ``factory(resolution, **backend_kwargs) -> Backend``."""


def resolve_arena(arena: str | os.PathLike[str], arenas_dir: str | Path | None = None) -> Path:
    """Turn an arena path or testbed task ID into an existing YAML path.

    Task IDs are found as every command finds them (``llm_aai.arena.catalog``): in
    ``arenas_dir``, else ``$LLM_AAI_ARENAS``, else the testbed cache.

    Raises:
        FileNotFoundError: no such file (for a task ID, the message says how to fetch it).
        TaskSelectionError: a task ID that is not in the testbed, or a mistyped one (digits
            and dashes that name no file, ``01-04-3``), said as ``run --tasks`` says it.

    """
    text = os.fspath(arena)
    path = Path(text)
    if TASK_ID.fullmatch(text) or (ID_LIKE.fullmatch(text) and not path.is_file()):
        return resolve_arena_path(text, arenas_dir)
    if not path.is_file():
        raise FileNotFoundError(f"arena file not found: {path}")
    return path


def draw_world_seed(rng: np.random.Generator) -> int:
    """Draw the seed of one episode's world from the env's ``np_random``.

    The backend places the arena from this number, not from the reset seed itself, so that
    ``reset()`` without a seed still gets a fresh world from the continuing sequence.
    """
    return int(rng.integers(0, 2**31 - 1))


def world_seed(seed: int) -> int:
    """The world seed that ``reset(seed=seed)`` hands the backend.

    For tools that must show the world an episode played without running it (``python -m
    llm_aai.arenas show``): ``seed`` is the episode seed, as logged in ``result.json`` and the
    manifest's ``seeds``. The generator is built exactly as gymnasium's ``Env.reset`` builds
    ``np_random``, and the draw is the env's own, so the two cannot drift apart.
    """
    rng, _ = seeding.np_random(seed)
    return draw_world_seed(rng)


@dataclasses.dataclass(frozen=True)
class EnvSnapshot:
    """The episode's state: the backend's copy of its world and the last observation."""

    backend: Any
    last: BackendStep


@dataclasses.dataclass(frozen=True)
class Seen:
    """An object in view: its YAML name, distance (m) and bearing (degrees, right > 0)."""

    name: str
    distance: float
    bearing: float


class AnimalAIEnv(gym.Env[dict[str, np.ndarray], np.ndarray]):
    """Animal-AI arenas as a gymnasium environment.

    Args:
        arena: YAML path or testbed task ID; may be left out and given to ``reset`` instead.
        resolution: side of the square first-person image, in pixels.
        backend: ``"embedded"`` (default), ``"unity"``, or a ``Backend`` instance.
        render_mode: ``None`` or ``"rgb_array"``.
        render_view: what ``render`` shows: ``"first_person"`` or ``"overview"``.
        overview_size: side of the overview image.
        arenas_dir: folder of testbed YAMLs for task IDs (default ``$LLM_AAI_ARENAS``).
        backend_kwargs: extra arguments for a named backend (e.g. ``file_name`` for unity).

    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 50 / 3}

    def __init__(
        self,
        arena: str | os.PathLike[str] | None = None,
        *,
        resolution: int = 512,
        backend: str | Backend = "embedded",
        render_mode: str | None = None,
        render_view: str = "first_person",
        overview_size: int = 512,
        arenas_dir: str | Path | None = None,
        backend_kwargs: Mapping[str, Any] | None = None,
    ) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
        if render_view not in RENDER_VIEWS:
            raise ValueError(f"render_view must be one of {RENDER_VIEWS}, got {render_view!r}")
        self.render_mode = render_mode
        self.render_view = render_view
        self.overview_size = int(overview_size)
        self.arenas_dir = arenas_dir
        self.resolution = int(resolution)
        self._arena_path = None if arena is None else resolve_arena(arena, arenas_dir)
        self._backend = self._make_backend(backend, dict(backend_kwargs or {}))
        if render_view == "overview" and not hasattr(self._backend, "render_overview"):
            self._backend.close()
            raise ValueError("this backend has no overview; use render_view='first_person'")
        self.action_space = spaces.MultiDiscrete([3, 3])
        self.observation_space = spaces.Dict(
            {
                "image": spaces.Box(0, 255, (self.resolution, self.resolution, 3), np.uint8),
                "health": spaces.Box(0.0, HEALTH_MAX, (1,), np.float32),
            }
        )
        self._last: BackendStep | None = None

    def _make_backend(self, backend: str | Backend, kwargs: dict[str, Any]) -> Backend:
        if not isinstance(backend, str):
            if kwargs:
                raise ValueError("backend_kwargs only apply to a backend given by name")
            if backend.resolution != self.resolution:
                raise ValueError(
                    f"backend renders {backend.resolution} px but resolution={self.resolution}"
                )
            return backend
        if backend not in BACKENDS:
            raise ValueError(f"unknown backend {backend!r}; known: {sorted(BACKENDS)}")
        return BACKENDS[backend](self.resolution, **kwargs)

    @property
    def arena_path(self) -> Path | None:
        """The arena file the next ``reset`` plays (without an ``arena`` option)."""
        return self._arena_path

    @property
    def backend(self) -> Backend:
        """The backend (for tools that need more than the gymnasium API)."""
        return self._backend

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Start an episode; ``options={"arena": path_or_task_id}`` switches arena first."""
        super().reset(seed=seed)
        options = dict(options or {})
        unknown = options.keys() - {"arena"}
        if unknown:
            raise ValueError(f"unknown reset options {sorted(unknown)}; known: ['arena']")
        if "arena" in options:
            self._arena_path = resolve_arena(options["arena"], self.arenas_dir)
        if self._arena_path is None:
            raise ValueError("no arena: pass arena=... to the env or options={'arena': ...}")
        seed_of_world = draw_world_seed(self.np_random)
        self._last = self._backend.reset(self._arena_path, seed_of_world)
        info = {**self._last.info, "arena": str(self._arena_path), "world_seed": seed_of_world}
        return self._observation(self._last), info

    def step(
        self, action: np.ndarray
    ) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        """Advance one AAI step with ``action = [move, turn]``."""
        self._advance(action, render=True)
        return (
            self._observation(self._last),
            float(self._last.reward),
            bool(self._last.done),
            False,
            dict(self._last.info),
        )

    def play(
        self, actions: Sequence[np.ndarray] | np.ndarray, *, observe: bool = True
    ) -> tuple[dict[str, np.ndarray] | None, float, bool, bool, list[dict[str, Any]]]:
        """Take several steps and observe only after the last one (or the one that ends).

        The trajectory is exactly that of calling ``step`` for each action: rendering does
        not touch the simulation. Only the frames in between are skipped, which is what makes
        a ``Go(20)`` cost one render instead of twenty. Returns the final observation, the
        summed reward, ``terminated``, ``truncated`` and the ``info`` of every step taken
        (each with the ``health`` after that step).

        With ``observe=False`` the last frame is not drawn either, unless the step ended the
        episode, and the observation returned is None: for steps whose result nobody may
        look at (the protocol's last no-ops before the first script). ``observe()`` draws it
        later if it is wanted after all.
        """
        if len(actions) == 0:
            raise ValueError("play() needs at least one action")
        total, infos = 0.0, []
        last = len(actions) - 1
        for index, action in enumerate(actions):
            self._advance(action, render=observe and index == last)
            total += float(self._last.reward)
            infos.append({**self._last.info, "health": self._last.health})
            if self._last.done:
                break
        observation = self._observation(self._last) if self._last.image is not None else None
        return observation, total, bool(self._last.done), False, infos

    def observe(self) -> dict[str, np.ndarray]:
        """The observation of the current state, drawing its frame now if it was skipped."""
        if self._last is None:
            raise RuntimeError("nothing to observe before reset()")
        if self._last.image is None:
            self._last = dataclasses.replace(self._last, image=self._backend.frame())
        return self._observation(self._last)

    def snapshot(self) -> EnvSnapshot:
        """An exact copy of the episode now: restoring it undoes every step taken since.

        What-ifs play a script on such a copy and go back (``llm_aai.protocol.what_if``).

        Raises:
            RuntimeError: no episode has started.
            NotImplementedError: the backend cannot copy its world (the Unity player).

        """
        if self._last is None:
            raise RuntimeError("nothing to snapshot before reset()")
        take = getattr(self._backend, "snapshot", None)
        if take is None:
            raise NotImplementedError(
                f"the {type(self._backend).__name__} cannot copy its world; what-ifs need "
                "the embedded simulator (--backend embedded)")
        return EnvSnapshot(take(), self._last)

    def restore(self, snapshot: EnvSnapshot) -> None:
        """Put the episode back to ``snapshot`` (taken by ``snapshot`` in this episode)."""
        self._backend.restore(snapshot.backend)  # type: ignore[attr-defined]
        self._last = snapshot.last

    def in_view(self) -> tuple[Seen, ...]:
        """The objects the agent sees now, nearest first (analysis only: ray cast, not drawn).

        Raises:
            NotImplementedError: the backend cannot say (the Unity player).

        """
        look = getattr(self._backend, "look", None)
        if look is None:
            raise NotImplementedError(
                f"the {type(self._backend).__name__} cannot say what is in view")
        _, sightings, dark = look()
        if dark:
            return ()
        return tuple(Seen(s.obj.spec.name, round(float(s.distance), 2),
                          round(float(s.bearing), 1))
                     for s in sorted(sightings, key=lambda sighting: sighting.distance))

    def _advance(self, action: np.ndarray, *, render: bool) -> None:
        if self._last is None or self._last.done:
            raise RuntimeError("the episode has ended or not started: call reset()")
        # A plain check, not action_space.contains: this runs on every step of a script and
        # of the run-out clock, where gymnasium's generic check costs more than the physics.
        try:
            move, turn = action
            valid = move in (0, 1, 2) and turn in (0, 1, 2) and int(move) == move
        except (TypeError, ValueError):
            valid = False
        if not valid or np.ndim(action) != 1:
            raise ValueError(f"action must be [move, turn] with values in 0..2, got {action!r}")
        self._last = self._backend.step(int(move), int(turn), render=render)

    def render(self) -> np.ndarray | None:
        """Return the ``rgb_array`` frame (None when ``render_mode`` is None)."""
        if self.render_mode is None:
            return None
        if self._last is None:
            raise RuntimeError("nothing to render before reset()")
        if self.render_view == "overview":
            return self._backend.render_overview(self.overview_size)  # type: ignore[attr-defined]
        return self.observe()["image"].copy()

    def close(self) -> None:
        """Release the backend (Unity player, OpenGL context)."""
        backend = getattr(self, "_backend", None)
        if backend is not None:
            backend.close()
            self._backend = None  # type: ignore[assignment]

    def _observation(self, step: BackendStep) -> dict[str, np.ndarray]:
        expected = self.observation_space["image"].shape
        if step.image.shape != expected or step.image.dtype != np.uint8:
            raise RuntimeError(
                f"backend returned an image {step.image.shape} {step.image.dtype}, "
                f"expected {expected} uint8"
            )
        return {"image": step.image, "health": np.array([step.health], dtype=np.float32)}
