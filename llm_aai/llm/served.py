"""What a self-hosted server says it serves: the model ids at ``GET {api_base}/models``.

A local server is named by the user's alias (``openai/local``), which says nothing of the
weights behind it: two GGUF files served one after the other under one alias look the same
to a run. vLLM, llama.cpp's servers and Ollama all list what they serve at the OpenAI
endpoint ``/models`` (llama.cpp by its file path), so the manifest records that list, and the
response cache keys replies by it: a reply cached from one server never answers another.
"""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request

__all__ = ["PROBE_TIMEOUT_S", "served_models"]

log = logging.getLogger(__name__)

PROBE_TIMEOUT_S = 5.0
"""A server that does not list its models within this is taken as one that does not."""


def served_models(api_base: str, *, timeout_s: float = PROBE_TIMEOUT_S,
                  api_key: str | None = None) -> tuple[str, ...] | None:
    """The ids ``api_base`` lists at ``/models``, sorted.

    None when it lists none (no such endpoint, not reachable, not JSON), said in the log.
    """
    url = api_base.rstrip("/") + "/models"
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    if not url.startswith(("http://", "https://")):
        return None  # the config refuses other schemes; urlopen would read files
    try:
        request = urllib.request.Request(url, headers=headers)
        with urllib.request.urlopen(request, timeout=timeout_s) as response:  # noqa: S310
            listed = json.loads(response.read()).get("data", [])
        ids = tuple(sorted(str(entry["id"]) for entry in listed if isinstance(entry, dict)
                           and "id" in entry))
    except (OSError, ValueError, AttributeError, TypeError) as error:
        log.warning("%s does not list the models it serves (%s): the run cannot record which "
                    "model answered", url, type(error).__name__)
        return None
    return ids or None
