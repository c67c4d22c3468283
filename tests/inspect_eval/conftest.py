"""Inspect counts tokens with tiktoken, which would download its encodings: litellm ships them.

``make test`` installs the ``inspect`` extra; without it these tests fail at import rather
than skip, so CI cannot pass without running them.
"""

from __future__ import annotations

import os
from pathlib import Path

import litellm
import pytest

os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(
    Path(litellm.__file__).parent / "litellm_core_utils" / "tokenizers"))


@pytest.fixture(autouse=True)
def asyncio_left_unpatched():
    """Fail a test after which inspect_ai has patched asyncio for the whole process.

    inspect_ai applies nest_asyncio when it must run a coroutine inside a running loop (an
    ``EvalLog`` handed to ``eval_retry`` loads its samples so); the patch cannot be undone,
    and every later ``asyncio.run`` in the test session then leaves its loop unclosed, which
    the garbage collector reports in some unrelated test much later.
    """
    yield
    from inspect_ai._util import _async

    assert not _async._initialised_nest_asyncio, "inspect_ai patched asyncio (nest_asyncio)"
