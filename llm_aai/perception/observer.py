"""How a run shows the agent the world: pixels, words, or both (``--observation``).

``ObservationMode`` is what a run asks for; ``TextObserver`` asks the env's backend what the
eye sees now and words it. The protocol passes observations through untouched; the runner
puts this text before the health line of each message and leaves the images out in text mode.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from llm_aai.perception.arena_map import describe_arena
from llm_aai.perception.text import PERSPECTIVES, Perspective, describe

OBSERVATIONS: tuple[str, ...] = ("image", "text", "both")


class TextUnavailable(ValueError):
    """The env cannot say what its eye sees (only the embedded simulator can)."""


def check_observation(observation: str, perspective: str, backend: str, *,
                      arena_map: bool = False) -> None:
    """Refuse an unknown mode or perspective, or text from a backend that cannot provide it.

    Raises:
        ValueError: the message names the setting and its allowed values.
    """
    if observation not in OBSERVATIONS:
        raise ValueError(f"observation must be one of {', '.join(OBSERVATIONS)}; "
                         f"got {observation!r}")
    if perspective not in PERSPECTIVES:
        raise ValueError(f"perspective must be one of {', '.join(PERSPECTIVES)}; "
                         f"got {perspective!r}")
    if observation != "image" and backend != "embedded":
        raise ValueError(f"--observation {observation} needs the embedded backend, which "
                         f"knows what the eye sees; the {backend} backend only gives pixels")
    if arena_map and backend != "embedded":
        raise ValueError(f"--prompt plan needs the embedded backend, which draws the arena's "
                         f"map; the {backend} backend only gives pixels")


@dataclass(frozen=True)
class ObservationMode:
    """What goes with each message: images, a text description, or both.

    Attributes:
        observation: ``image`` (the paper's), ``text`` or ``both``.
        perspective: the text's frame of reference, ``egocentric`` or ``allocentric``.
        arena_map: plan-then-act: the first message carries the arena's map instead of a
            description, and at most the first image.
    """

    observation: str = "image"
    perspective: Perspective = "egocentric"
    arena_map: bool = False

    @property
    def images(self) -> bool:
        """Whether images are sent."""
        return self.observation != "text"

    @property
    def text(self) -> bool:
        """Whether a text description is sent."""
        return self.observation != "image"

    def describe(self, env: Any) -> str:
        """The text description of what the eye of ``env``'s agent sees now.

        Raises:
            TextUnavailable: the env's backend has no ``look``.
        """
        backend = _backend(env)
        look = getattr(backend, "look", None)
        if look is None:
            raise TextUnavailable(f"{type(backend).__name__} cannot describe what the agent "
                                  "sees; text observations need the embedded backend")
        eye, sightings, dark = look()
        return describe(sightings, eye, perspective=self.perspective, dark=dark)

    def first_images(self, images: list) -> list:
        """The frames of the first message: all of them, the first only with a map, or none."""
        if not self.images:
            return []
        return images[:1] if self.arena_map else images

    def capture(self, env: Any) -> Callable[[], str] | None:
        """What to capture as each initial observation is taken (``also_capture``), if any.

        The first message's pictures were taken before the start's last no-ops; its words
        must be of the same instant (a blackout may begin in between), so the view is worded
        as each picture is taken rather than when the message is sent.
        """
        if not self.text or self.arena_map:
            return None
        return lambda: self.describe(env)

    def first_message(self, env: Any, text: str, view: str | None = None) -> str:
        """The first message's text: the map (plan-then-act) or as ``message``.

        Args:
            env: the episode's env.
            text: the health line.
            view: the worded view when the last initial picture was taken (``capture``);
                None: worded now.
        """
        if not self.arena_map:
            return self.message(env, text, view)
        layout = getattr(_backend(env), "layout", None)
        if layout is None:
            raise TextUnavailable("the arena's map needs the embedded backend")
        return f"{describe_arena(*layout())}\n{text}"

    def message(self, env: Any, text: str, view: str | None = None) -> str:
        """``text`` (the health line), after the description when text is sent.

        The description is ``view`` if given, else what the eye sees now.
        """
        if not self.text:
            return text
        return f"{view if view is not None else self.describe(env)}\n{text}"


def _backend(env: Any) -> Any:
    return getattr(getattr(env, "unwrapped", env), "backend", None)


IMAGE_ONLY = ObservationMode()
