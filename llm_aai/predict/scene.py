"""What the questions read from the world: the objects in view and every object's place now.

The kinds need more than the frame the model saw: which objects are in view (the ray cast
the text observation uses, ``llm_aai.sim.sight``), where unseen ones are, and each object's
words in the prompt (``llm_aai.perception.words``). All of it comes from the embedded
backend's ``look`` and ``layout``, read here only, so the kinds never touch the simulator.
Objects are told apart by their index in the arena's placed objects, which a collected
yellow ball keeps (it is only left out of ``layout``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from llm_aai.arena.objects import Kind
from llm_aai.perception.words import object_noun

__all__ = ["Thing", "View", "look", "pose_of", "where_from"]


@dataclass(frozen=True)
class Thing:
    """One object of the arena now.

    Attributes:
        index: its place in the arena's placed objects (stable for the episode).
        name: its YAML name (``GoodGoal``, ``Wall``...).
        noun: the prompt's words for it (``green ball``, ``grey wall``...).
        kind: its kind (goal, wall, zone...).
        centre: its centre now, Unity coordinates.
    """

    index: int
    name: str
    noun: str
    kind: Kind
    centre: tuple[float, float, float]


@dataclass(frozen=True)
class View:
    """The world at one instant: the eye, every object present, and those in view.

    Attributes:
        eye: the eye's (x, y, z) and the agent's yaw (degrees clockwise from +z).
        things: every object still in the arena, by index.
        in_view: the indices of the objects the eye sees (none in the dark).
        nouns: every object's words, collected ones too, by index.
        dark: the lights are off.
    """

    eye: tuple[tuple[float, float, float], float]
    things: dict[int, Thing]
    in_view: frozenset[int]
    nouns: dict[int, str]
    dark: bool

    def unique(self, index: int) -> bool:
        """No other object of the arena, collected or not, has this object's words."""
        noun = self.nouns[index]
        return sum(other == noun for other in self.nouns.values()) == 1

    def where(self, index: int) -> tuple[float, float]:
        """Distance (m, on the ground) and bearing (degrees, right > 0) of an object now."""
        return where_from(self.eye, self.things[index].centre)


def _backend(env: Any) -> Any:
    backend = getattr(env, "backend", None)
    if backend is None or not hasattr(backend, "layout") or not hasattr(backend, "look"):
        raise NotImplementedError(
            f"{type(backend).__name__} cannot say where objects are; the prediction "
            "questions need the embedded simulator (--backend embedded)")
    return backend


def look(env: Any) -> View:
    """Read the world of ``env``'s episode now (nothing is stepped or drawn).

    Raises:
        NotImplementedError: the backend cannot say (the Unity player).
    """
    backend = _backend(env)
    placed = backend.simulator.objects
    index_of = {id(obj): i for i, obj in enumerate(placed)}
    eye, objects, centres = backend.layout()
    things = {}
    for obj, centre in zip(objects, centres, strict=True):
        i = index_of[id(obj)]
        things[i] = Thing(i, obj.spec.name, object_noun(obj.spec, obj.color), obj.spec.kind,
                          tuple(float(v) for v in centre))
    _, sightings, dark = backend.look()
    seen = frozenset() if dark else frozenset(s.index for s in sightings)
    nouns = {i: object_noun(obj.spec, obj.color) for i, obj in enumerate(placed)}
    return View((tuple(float(v) for v in eye.position), float(eye.yaw)), things, seen, nouns,
                bool(dark))


def pose_of(env: Any) -> tuple[tuple[float, float, float], float]:
    """The agent's position (Unity) and yaw now."""
    state = _backend(env).simulator.state
    return tuple(float(v) for v in state.position), float(state.yaw)


def where_from(eye: tuple[tuple[float, float, float], float],
               point: tuple[float, float, float]) -> tuple[float, float]:
    """Ground distance and bearing (degrees in (-180, 180], right > 0) of ``point`` from ``eye``."""
    (x, _, z), yaw = eye
    dx, dz = point[0] - x, point[2] - z
    theta = math.radians(yaw)
    forward = dx * math.sin(theta) + dz * math.cos(theta)
    right = dx * math.cos(theta) - dz * math.sin(theta)
    return math.hypot(dx, dz), math.degrees(math.atan2(right, forward))
