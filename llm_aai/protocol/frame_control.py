"""Deprecated name of ``llm_aai.protocol.action_control`` (per-action control).

Issue 34 gave "frame" one meaning, a camera image, so ``--control frame`` became ``--control
action`` and this module ``action_control``. Importing it still works, with a
``DeprecationWarning``; ``FrameControl`` and ``frame_reply`` are ``ActionControl`` and
``action_reply``.
"""

import warnings

from llm_aai.protocol.action_control import (
    ACTION_NAMES,
    MAX_REPEAT,
    ActionControl,
    action_name,
    action_reply,
)

warnings.warn("llm_aai.protocol.frame_control is deprecated: use llm_aai.protocol.action_control "
              "(FrameControl is ActionControl, frame_reply is action_reply)", DeprecationWarning,
              stacklevel=2)

FrameControl = ActionControl
frame_reply = action_reply

__all__ = ["ACTION_NAMES", "MAX_REPEAT", "FrameControl", "action_name", "frame_reply"]
