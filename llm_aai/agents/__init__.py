"""Agents: the LLM agent and the non-LLM baselines, behind one interface and one registry."""

from llm_aai.agents.base import Agent, AgentReply, PriorTurn, TurnInput
from llm_aai.agents.heuristic import HeuristicAgent, HeuristicSettings
from llm_aai.agents.human import HumanAgent
from llm_aai.agents.llm import LLMAgent
from llm_aai.agents.random_agent import RandomAgent
from llm_aai.agents.registry import (
    AGENTS,
    AgentEntry,
    AgentSpec,
    agent_preset,
    make_agent,
    register_agent,
    resolve_agent,
)
from llm_aai.agents.replay import ReplayAgent, ReplayExhausted

__all__ = [
    "PriorTurn",
    "AGENTS",
    "Agent",
    "AgentEntry",
    "AgentReply",
    "AgentSpec",
    "HeuristicAgent",
    "HeuristicSettings",
    "HumanAgent",
    "LLMAgent",
    "RandomAgent",
    "ReplayAgent",
    "ReplayExhausted",
    "TurnInput",
    "agent_preset",
    "make_agent",
    "register_agent",
    "resolve_agent",
]
