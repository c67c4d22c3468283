"""The oracle: a privileged agent that plans by simulating (an upper bound for every agent).

It sees the placed arena (every object, goal and zone) and uses the simulator itself as its
model of the world: from exact snapshots (``Simulator.snapshot``) it tries action sequences
and keeps the best. ``llm_aai.oracle.navigation`` maps the arena, ``llm_aai.oracle.search``
searches (``llm_aai.oracle.tools``: waiting for a moving ball, shoving a block),
``llm_aai.oracle.play`` plays a whole episode under the paper's protocol directly on a
simulator (what the audit uses). The agent adapter, ``llm_aai.agents.oracle``, lets the
runner play it like any model. Nothing here knows LLMs, files or the runner.
"""

from llm_aai.oracle.play import OracleEpisode, play_oracle_episode
from llm_aai.oracle.search import DEFAULT_BUDGET, Plan, SearchSettings, plan_script

__all__ = ["DEFAULT_BUDGET", "OracleEpisode", "Plan", "SearchSettings", "plan_script",
           "play_oracle_episode"]
