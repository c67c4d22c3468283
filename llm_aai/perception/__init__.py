"""Perception-free probes: the scene in words instead of pixels.

``text.describe`` words what the simulator's eye sees (``llm_aai.sim.sight``) in an
egocentric or allocentric perspective; ``words`` holds the prompt's names for objects and the
rounding of numbers. The simulator knows nothing of this wording: it only says what is seen.
"""

from llm_aai.perception.text import NOTHING, PERSPECTIVES, describe

__all__ = ["NOTHING", "PERSPECTIVES", "describe"]
