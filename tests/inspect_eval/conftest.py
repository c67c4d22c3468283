"""Inspect counts tokens with tiktoken, which would download its encodings: litellm ships them.

``make test`` installs the ``inspect`` extra; without it these tests fail at import rather
than skip, so CI cannot pass without running them.
"""

from __future__ import annotations

import os
from pathlib import Path

import litellm

os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(
    Path(litellm.__file__).parent / "litellm_core_utils" / "tokenizers"))
