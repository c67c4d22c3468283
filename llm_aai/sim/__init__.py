"""The embedded Animal-AI simulator on MuJoCo (no gymnasium, no LLMs, no files).

``Simulator`` loads a ``PlacedArena`` (from ``llm_aai.arena.placement``), steps it with AAI's
3 x 3 discrete actions and renders the agent's first-person view.
"""

from llm_aai.sim.rules import RewardEvent
from llm_aai.sim.simulator import AgentState, Simulator, StepResult
from llm_aai.sim.stability import SimulationUnstable

__all__ = ["AgentState", "RewardEvent", "SimulationUnstable", "Simulator", "StepResult"]
