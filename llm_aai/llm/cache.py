"""A response cache: an identical request at temperature 0 is answered from disk, for free.

Re-running a finished run, or replaying a crashed run's turns, then costs nothing. The key
is the sha256 of the model id, every message (each image by its own sha256) and every
sampling parameter; with a self-hosted server (``--api-base``) also its address and the models
it lists at ``/models`` (``llm_aai.llm.served``), so one server's replies never answer
another's. The API key is never part of it, and an entry holds only the reply and its token
counts. An entry that cannot be read is a miss.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from llm_aai.llm.served import served_models
from llm_aai.llm.types import LLMResponse, Message

__all__ = ["CachedClient", "ResponseCache", "default_cache_dir", "request_key"]

log = logging.getLogger(__name__)

KEY_VERSION = 1


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/llm-aai/responses`` (default ``~/.cache``)."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "llm-aai" / "responses"


def _hashed_images(value: Any) -> Any:
    """The messages with every data URL replaced by its sha256 (images are large)."""
    if isinstance(value, dict):
        return {key: _hashed_images(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_hashed_images(item) for item in value]
    if isinstance(value, str) and value.startswith("data:"):
        return "sha256:" + hashlib.sha256(value.encode()).hexdigest()
    return value


def request_key(model: str, messages: Sequence[Message], params: dict[str, Any]) -> str:
    """The cache key of one request: model, messages (images by hash) and parameters."""
    record = {"v": KEY_VERSION, "model": model, "messages": _hashed_images(list(messages)),
              "params": params}
    text = json.dumps(record, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class ResponseCache:
    """Replies on disk by request key, counting hits and misses (thread-safe)."""

    def __init__(self, directory: Path):
        self.directory = Path(directory)
        self.hits = 0
        self.misses = 0
        self.write_failures = 0
        """Replies that could not be stored (each was still returned)."""
        self._lock = threading.Lock()
        self._servers: dict[str, tuple[str, ...] | None] = {}

    def server_identity(self, api_base: str) -> tuple[str, ...] | None:
        """The models ``api_base`` lists, asked once per cache (a run)."""
        with self._lock:
            if api_base not in self._servers:
                self._servers[api_base] = served_models(api_base)
            return self._servers[api_base]

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored reply, or None (counted as a miss) when absent or unreadable."""
        entry = None
        try:
            data = json.loads(self._path(key).read_text(encoding="utf-8"))
            if isinstance(data, dict) and isinstance(data.get("text"), str):
                entry = data
            else:
                log.warning("response cache: %s is not an entry; treated as a miss",
                            self._path(key))
        except (FileNotFoundError, NotADirectoryError):  # no entry (no folder: said by put)
            pass
        except (OSError, ValueError) as error:
            log.warning("response cache: %s unreadable (%s); treated as a miss",
                        self._path(key), error)
        with self._lock:
            if entry is None:
                self.misses += 1
            else:
                self.hits += 1
        return entry

    def put(self, key: str, response: LLMResponse) -> None:
        """Store a reply (atomically: a reader never sees half an entry).

        A cache that cannot be written (a file where its folder should be, a read-only or
        full disk) costs the reply nothing: it was paid for, and the run needs it more than
        the cache does. The first failure is a warning, later ones are counted.
        """
        try:
            self._write(self._path(key), response)
        except OSError as error:
            with self._lock:
                self.write_failures += 1
                first = self.write_failures == 1
            if first:
                log.warning("response cache: cannot store replies in %s (%s); the run goes "
                            "on without storing them", self.directory,
                            error.strerror or error)

    @staticmethod
    def _write(path: Path, response: LLMResponse) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        entry = {"text": response.text, "model": response.model,
                 "input_tokens": response.input_tokens, "output_tokens": response.output_tokens,
                 "finish_reason": response.raw_finish_reason}
        handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                json.dump(entry, stream)
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise


class CachedClient:
    """A model client answering repeated requests from a ``ResponseCache``.

    A hit costs nothing and takes no time (its tokens are reported as zero, as nothing was
    billed); a miss is sent to ``inner`` and stored.
    """

    def __init__(self, inner: Any, cache: ResponseCache):
        self.inner = inner
        self.cache = cache

    @property
    def model(self) -> str:
        """The model the inner client calls."""
        return self.inner.model

    def __getattr__(self, name: str) -> Any:  # max_tokens, temperature... of the inner client
        return getattr(self.inner, name)

    def _params(self) -> dict[str, Any]:
        inner = self.inner
        params = {"temperature": inner.temperature, "max_tokens": inner.max_tokens,
                  **getattr(inner, "extra_params", {})}
        api_base = getattr(inner, "api_base", None)
        if api_base:  # a self-hosted server: which one, and what it serves (hosted: unchanged)
            params["api_base"] = api_base
            params["served_models"] = self.cache.server_identity(api_base)
        return params

    def complete(self, messages: Sequence[Message]) -> LLMResponse:
        """The stored reply to this exact request, else the model's (then stored)."""
        key = request_key(self.inner.model, messages, self._params())
        entry = self.cache.get(key)
        if entry is not None:
            return LLMResponse(text=entry["text"], model=str(entry.get("model") or self.model),
                               input_tokens=0, output_tokens=0, cost_usd=0.0, latency_s=0.0,
                               retries=0, raw_finish_reason=entry.get("finish_reason"),
                               notes=("answered from the response cache",))
        response = self.inner.complete(messages)
        self.cache.put(key, response)
        return response
