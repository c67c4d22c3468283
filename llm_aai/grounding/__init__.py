"""Why models fail: every claim of a Think judged against the simulator's true state.

``extract`` splits a Think into claims (rules; ``llm_extract`` asks a model instead),
``scene.probe`` takes what the simulator knew at the instant of the turn's observation while
``llm_aai.replay`` re-simulates the episode, ``verify`` judges each claim, ``ground_run``
writes ``grounding.csv`` and the failed episodes' classes, and ``summary`` reads them back.
The command line is ``python -m llm_aai.grounding RUN_DIR`` (``llm_aai.cli.grounding``).
"""

from llm_aai.grounding.claims import KINDS, Claim
from llm_aai.grounding.extract import extract
from llm_aai.grounding.ground import (
    EPISODES_CSV,
    GROUNDING_CSV,
    EpisodeGrounding,
    GroundedClaim,
    GroundingError,
    ground_episode,
    ground_run,
)
from llm_aai.grounding.scene import Scene, SceneObject, probe
from llm_aai.grounding.summary import claim_rows, episode_rows, render_summary, shares
from llm_aai.grounding.verify import TurnTruth, Verdict, verify

__all__ = [
    "EPISODES_CSV",
    "GROUNDING_CSV",
    "KINDS",
    "Claim",
    "EpisodeGrounding",
    "GroundedClaim",
    "GroundingError",
    "Scene",
    "SceneObject",
    "TurnTruth",
    "Verdict",
    "claim_rows",
    "episode_rows",
    "extract",
    "ground_episode",
    "ground_run",
    "probe",
    "render_summary",
    "shares",
    "verify",
]
