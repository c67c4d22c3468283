"""How fast an animation plays: a rate chosen from the episode, unless ``--fps`` names one.

One frame a second suits a script episode: each frame closes a turn whose caption (the
thoughts, the script) is there to be read. A per-action episode (``--control action``, a
human at the keyboard) sends a frame for every step, with a one-word caption; at one a
second, a two-minute game became a 54 s GIF that showed the agent crawling.
"""

from __future__ import annotations

from llm_aai.replay.episode import LoggedEpisode

__all__ = ["ACTION_SECONDS", "MAX_SCRIPT_SECONDS", "pick_fps", "per_action"]

MAX_SCRIPT_SECONDS = 60.0
"""A script episode plays at one frame a second up to this long, faster beyond it."""

ACTION_SECONDS = 15.0
"""What a per-action episode aims at, between 2 and 12 frames a second."""

ACTION_FPS = (2.0, 12.0)


def per_action(episode: LoggedEpisode) -> bool:
    """Whether the episode was played one action a reply (its commands are ``Act``)."""
    return any(command.get("op") == "Act" for turn in episode.turns
               for command in turn.commands or ())


def pick_fps(frames: int, *, action: bool) -> float:
    """The frame rate for ``frames`` frames of a per-action (``action``) or script episode.

    Rounded to a tenth, so that the rate printed is the rate written.
    """
    if action:
        low, high = ACTION_FPS
        return round(min(high, max(low, frames / ACTION_SECONDS)), 1)
    return round(max(1.0, frames / MAX_SCRIPT_SECONDS), 1)
