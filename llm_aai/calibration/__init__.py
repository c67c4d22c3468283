"""Calibration tools: the simulator against the real Unity recording.

Kept out of the simulator core (``llm_aai.sim`` reads no files and parses no scripts):
``fidelity`` replays the recording's arena and scripts under the paper's protocol
(``llm_aai.protocol``) and reads its recorded health and frames, which
``tests/calibration/test_fidelity.py`` compares; ``similarity`` scores each recorded frame
against ours (the per-turn table of ``python -m llm_aai.calibration``); ``contact_sheet`` puts
each recorded frame beside the simulated one (``--out sheet.png``).
The PhysX cross-check (``tools/physx_crosscheck``) builds on ``fidelity`` too.
"""

from llm_aai.calibration.fidelity import (
    RecordedScript,
    Replay,
    ScriptReplay,
    read_recorded_frame,
    read_recording,
    replay_recording,
)

__all__ = [
    "RecordedScript",
    "Replay",
    "ScriptReplay",
    "read_recorded_frame",
    "read_recording",
    "replay_recording",
]
