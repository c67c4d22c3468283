"""Runs a person played in the browser (``python -m llm_aai.human serve``), told from the rest.

Such a run is continued where it was played: its participant enters their id again in the
served study, and the server takes the run up at the first level not finished (keeping an
abandoned level's replies as an attempt). ``run --resume`` would instead play it with the
terminal's ``human`` agent, so it refuses these runs, and ``analyze`` says how to continue them
rather than suggesting ``--resume``. A browser run is one whose agent is ``human`` with the
``participant`` and ``interface`` the server records in the agent's options.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["browser_participant", "continue_in_browser"]


def browser_participant(agent: Mapping[str, Any]) -> tuple[str, str] | None:
    """``(participant, interface)`` of a run played in the browser (from its manifest's agent).

    None: the run was not played in the browser (a model, a person at the terminal).
    """
    options = agent.get("options")
    if agent.get("name") != "human" or not isinstance(options, Mapping):
        return None
    participant, interface = options.get("participant"), options.get("interface")
    if isinstance(participant, str) and isinstance(interface, str):
        return participant, interface
    return None


def continue_in_browser(run_dir: str | Path, participant: str, interface: str) -> str:
    """How to continue the browser run ``run_dir``, in one sentence."""
    query = "/?control=keys" if interface == "keys" else "/"
    return (f"serve the study again with its settings (python -m llm_aai.human serve ... --out "
            f"{Path(run_dir).parent}) and let participant {participant} enter their id at "
            f"{query}: the levels not finished are played on in the browser")
