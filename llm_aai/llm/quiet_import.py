"""Import litellm lazily and without its console banners.

litellm takes seconds to import, so only the code paths that talk to a model import it.
Every such path goes through :func:`import_litellm`, because litellm prints a coloured
"Provider List" or "Give Feedback" banner on stdout before some of its exceptions unless
``suppress_debug_info`` is set first; our own error messages say what went wrong instead.
"""

from __future__ import annotations

from typing import Any

__all__ = ["import_litellm"]


def import_litellm() -> Any:
    """The litellm module, with its debug banners switched off."""
    import litellm

    litellm.suppress_debug_info = True
    return litellm
