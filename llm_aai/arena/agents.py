"""How many agents an arena configuration asks for (Animal-AI 4.4 allows several).

The embedded simulator, the bridge and the unity backend all play one agent, so each refuses
a configuration with more than one ``Agent`` item in one place, here, with the same words.
"""

from __future__ import annotations

from llm_aai.arena.errors import ArenaError
from llm_aai.arena.model import ArenaConfig


def refuse_several_agents(config: ArenaConfig, *, who: str) -> None:
    """Raise unless every arena of ``config`` has at most one ``Agent`` item.

    Args:
        config: the parsed configuration.
        who: the component refusing it, for the message (``"the llm-aai bridge"``...).

    Raises:
        ArenaError: an arena with several agents, located at its second ``Agent`` item.

    """
    for arena_id, arena in config.arenas:
        agents = [item for item in arena.items if item.name == "Agent"]
        if len(agents) > 1:
            line = agents[1].location.line if agents[1].location else None
            raise ArenaError(
                f"arena {arena_id} has {len(agents)} Agent items: multi-agent arenas are not "
                f"supported by {who}, which plays one agent",
                file=config.source or "<arena>", line=line, field="name")
