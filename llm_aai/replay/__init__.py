"""Replay logged episodes: animations with captions, and bit-exact re-simulation.

``load_episode`` reads an episode directory; ``render_frames`` + ``write_animation`` make a GIF
or MP4 of what the agent saw and did; ``resimulate`` re-executes the logged actions in the
embedded simulator and reports, turn by turn, whether everything matches the log. The command
line is ``python -m llm_aai.replay`` (``llm_aai.cli.replay``).
"""

from llm_aai.replay.animation import (
    FORMATS,
    CaptionStyle,
    caption,
    render_frames,
    tile_size,
    write_animation,
)
from llm_aai.replay.episode import (
    ArenaMissingError,
    LoggedEpisode,
    ReplayInputError,
    ShownFrame,
    load_episode,
)
from llm_aai.replay.resimulate import Check, Resimulation, TurnCheck, resimulate, verified_arena

__all__ = [
    "FORMATS",
    "ArenaMissingError",
    "CaptionStyle",
    "Check",
    "LoggedEpisode",
    "ReplayInputError",
    "Resimulation",
    "ShownFrame",
    "TurnCheck",
    "caption",
    "load_episode",
    "render_frames",
    "resimulate",
    "tile_size",
    "verified_arena",
    "write_animation",
]
