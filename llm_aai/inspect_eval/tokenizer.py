"""Inspect's token counting offline: tiktoken downloads its encodings, and says so in 80 lines.

Inspect counts tokens with tiktoken (the ``mockllm`` model for its usage, others for limits);
tiktoken fetches each encoding from the network the first time and keeps it in
``TIKTOKEN_CACHE_DIR``. Offline, with no copy there, the request's ``ConnectionError`` ended
the sample as an 80-line traceback of ``requests`` internals. The client turns it into one
error that says what to set: litellm ships the encodings, in a folder the message names.
"""

from __future__ import annotations

import importlib.util
import os
import traceback
from pathlib import Path

from inspect_ai._util.error import PrerequisiteError

__all__ = ["TokenizerOffline", "check_encoding_loads", "raised_by_tiktoken", "tokenizer_hint"]

ENCODING = "o200k_base"
"""The encoding Inspect counts text with (``inspect_ai.model._tokens.count_text_tokens``)."""


class TokenizerOffline(PrerequisiteError):
    """tiktoken could not load an encoding; the message says which folder to point it at.

    A ``PrerequisiteError``, the kind Inspect shows as its message alone (a missing package,
    a missing key), as it is a setup to fix rather than a failure of the model.
    """

    def __str__(self) -> str:
        return str(self.message)


def check_encoding_loads() -> None:
    """Load tiktoken's encoding now, or raise ``TokenizerOffline`` saying what to set.

    Called when the task is made for a model that counts every call's tokens with it
    (``mockllm``): a failure there is Inspect's message alone, where the same failure in a
    sample is a traceback. tiktoken keeps the loaded encoding, so the sample does not load
    it again.

    Raises:
        TokenizerOffline: the encoding is neither in the cache nor downloadable.

    """
    import tiktoken

    try:
        tiktoken.get_encoding(ENCODING)
    except Exception as error:
        if raised_by_tiktoken(error):
            raise TokenizerOffline(tokenizer_hint(error)) from None
        raise


def raised_by_tiktoken(error: BaseException) -> bool:
    """Whether ``error`` came out of tiktoken's loader (``tiktoken/load.py`` in its trace).

    Reading the cache and downloading both happen there; an error anywhere else (the model's
    own, or tiktoken counting a loaded encoding) is not this one.
    """
    return any(Path(frame.f_code.co_filename).parts[-2:] == ("tiktoken", "load.py")
               for frame, _ in traceback.walk_tb(error.__traceback__))


def tokenizer_hint(error: BaseException) -> str:
    """The message: what failed, why (the error's first line), and the variable to set."""
    # requests' message ends in its urllib3 chain, "(Caused by NameResolutionError(...))"
    reason = (str(error).splitlines() or [""])[0].split(" (Caused by")[0]
    where = os.environ.get("TIKTOKEN_CACHE_DIR")
    shipped = litellm_encodings()
    fix = (f"TIKTOKEN_CACHE_DIR={shipped} (the encodings litellm ships)" if shipped else
           "TIKTOKEN_CACHE_DIR to a folder holding tiktoken's encodings")
    return (f"Inspect counts tokens with tiktoken, which could not load its encoding "
            f"{'from ' + where + ' ' if where else ''}nor download it "
            f"({type(error).__name__}: {reason[:200]}); offline, set {fix} and run again "
            "(docs/inspect.md)")


def litellm_encodings() -> Path | None:
    """The copy of tiktoken's encoding files litellm ships, found without importing litellm."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or spec.origin is None:
        return None
    folder = Path(spec.origin).parent / "litellm_core_utils" / "tokenizers"
    return folder if folder.is_dir() else None
