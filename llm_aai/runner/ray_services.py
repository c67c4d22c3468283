"""The response cache and the provider's concurrency limit of a run on Ray, each one actor.

Besides its budget, a run shares these two across the cluster, each held by one named actor
on the driver's node.

Locally both live in the run's process: ``ResponseCache`` is a folder of the driver's disk and
``provider_semaphore`` a per-process semaphore. Episodes played as Ray tasks on several
machines reach them through an actor instead (as the budget does, ``llm_aai.runner.ray_budget``):

* ``CacheServer`` serves the driver's ``ResponseCache``: a worker on any node looks replies up
  and stores them through it, so the cache stays one folder on the driver's disk and the
  cluster needs no shared filesystem. ``RayResponseCache`` is the cache's interface over it,
  used by ``CachedClient`` unchanged.
* ``ProviderSlots`` holds one semaphore per provider endpoint for the whole cluster;
  ``SlottedClient`` takes a slot around each call, so at most ``--provider-concurrency``
  calls are in flight to a provider however many nodes play.

Each proxy pickles as the actor's name, so it travels to the workers with the episode and
finds the actor where it lands. The actors are pinned to the driver's node: a worker node
lost takes neither the cache nor the slots with it.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from llm_aai.execution.ray_executor import import_ray
from llm_aai.llm.cache import ResponseCache
from llm_aai.llm.types import LLMResponse, Message

__all__ = ["CacheServer", "ProviderSlots", "RayResponseCache", "SlottedClient",
           "actor_name", "start_on_driver"]


def actor_name(kind: str) -> str:
    """A name no other run on the cluster uses (two runs may share one cluster)."""
    return f"llm-aai-{kind}-{secrets.token_hex(6)}"


def start_on_driver(body: type, name: str, *args: Any) -> Any:
    """Create the named actor ``body(*args)`` on this (the driver's) node; its handle.

    No CPU is reserved for it (it waits, it does not compute) and it is never restarted: its
    state is the run's, and the run ends with the driver.
    """
    ray = import_ray()
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False)
    return ray.remote(body).options(name=name, num_cpus=0, max_restarts=0,
                                    scheduling_strategy=here).remote(*args)


class _ByName:
    """A proxy that pickles as its actor's name and finds the actor again where it lands."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._handle: Any = None

    def _actor(self) -> Any:
        if self._handle is None:
            self._handle = import_ray().get_actor(self.name)
        return self._handle

    def _call(self, method: str, *args: Any) -> Any:
        return import_ray().get(getattr(self._actor(), method).remote(*args))

    def __getstate__(self) -> dict:
        return {"name": self.name}

    def __setstate__(self, state: dict) -> None:
        self.name = state["name"]
        self._handle = None


class CacheServer:
    """The actor's body: the driver's ``ResponseCache``, reached from every node."""

    def __init__(self, directory: str) -> None:
        self.cache = ResponseCache(Path(directory))

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored reply, or None (counted as a miss)."""
        return self.cache.get(key)

    def put(self, key: str, response: LLMResponse) -> None:
        """Store a reply on the driver's disk."""
        self.cache.put(key, response)

    def server_identity(self, api_base: str) -> tuple[str, ...] | None:
        """The models ``api_base`` lists, asked once for the whole run."""
        return self.cache.server_identity(api_base)

    def counts(self) -> tuple[int, int, int]:
        """(hits, misses, write failures) of the whole run's invocation."""
        return self.cache.hits, self.cache.misses, self.cache.write_failures


class RayResponseCache(_ByName):
    """A ``ResponseCache`` whose entries live on the driver, behind the ``CacheServer`` actor.

    Args:
        name: the actor's name.
        directory: the cache's folder on the driver (what the manifest records).
    """

    def __init__(self, name: str, directory: Path) -> None:
        super().__init__(name)
        self.directory = Path(directory)

    def __getstate__(self) -> dict:
        return {"name": self.name, "directory": str(self.directory)}

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        self.directory = Path(state["directory"])

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored reply, or None."""
        return self._call("get", key)

    def put(self, key: str, response: LLMResponse) -> None:
        """Store a reply (on the driver's disk)."""
        self._call("put", key, response)

    def server_identity(self, api_base: str) -> tuple[str, ...] | None:
        """The models ``api_base`` lists (asked by the actor, once a run)."""
        return self._call("server_identity", api_base)

    def counts(self) -> tuple[int, int, int]:
        """(hits, misses, write failures) counted by the actor."""
        return self._call("counts")


class ProviderSlots:
    """The actor's body: one semaphore per provider endpoint for the whole cluster.

    Its methods are coroutines, so Ray runs them concurrently in the actor's event loop: an
    ``acquire`` waits for a ``release`` sent by another worker, as a thread waits on a
    semaphore locally. ``peak`` says how many calls were ever in flight at once per endpoint.
    """

    def __init__(self) -> None:
        self._slots: dict[str, asyncio.Semaphore] = {}
        self._held: dict[str, int] = {}
        self._peak: dict[str, int] = {}

    async def acquire(self, key: str, limit: int) -> None:
        """Wait for a free slot of ``key`` (at most ``limit`` held at once)."""
        slots = self._slots.setdefault(key, asyncio.Semaphore(limit))
        await slots.acquire()
        self._held[key] = self._held.get(key, 0) + 1
        self._peak[key] = max(self._peak.get(key, 0), self._held[key])

    async def release(self, key: str) -> None:
        """Free a slot of ``key``."""
        self._held[key] -= 1
        self._slots[key].release()

    async def peak(self) -> dict[str, int]:
        """The most slots each endpoint ever had held at once."""
        return dict(self._peak)


class SlottedClient(_ByName):
    """A model client whose every call holds one of its provider's cluster-wide slots.

    Args:
        inner: the client that makes the calls (``LiteLLMClient``).
        name: the ``ProviderSlots`` actor's name.
    """

    def __init__(self, inner: Any, name: str) -> None:
        super().__init__(name)
        self.inner = inner

    def __getstate__(self) -> dict:
        return {"name": self.name, "inner": self.inner}

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        self.inner = state["inner"]

    def __getattr__(self, name: str) -> Any:  # model, max_tokens, temperature... of the inner
        if name in ("inner", "name", "_handle"):
            raise AttributeError(name)
        return getattr(self.inner, name)

    @property
    def slot_key(self) -> str:
        """The provider endpoint the slots are counted for."""
        provider = getattr(getattr(self.inner, "spec", None), "provider", self.inner.model)
        return f"{provider}|{getattr(self.inner, 'api_base', None) or ''}"

    def complete(self, messages: Sequence[Message]) -> LLMResponse:
        """Take a slot, call, give the slot back (also when the call fails)."""
        key = self.slot_key
        self._call("acquire", key, int(self.inner.max_concurrent))
        try:
            return self.inner.complete(messages)
        finally:
            self._call("release", key)
