"""The response cache and the provider's limits of a run on Ray, each one actor.

Besides its budget, a run shares these two across the cluster, each held by one named actor
on the driver's node.

Locally both live in the run's process: ``ResponseCache`` is a folder of the driver's disk and
``local_gate`` a per-process gate (``llm_aai.llm.provider_limits``). Episodes played as Ray
tasks on several machines reach them through an actor instead (as the budget does,
``llm_aai.runner.ray_budget``):

* ``CacheServer`` serves the driver's ``ResponseCache``: a worker on any node looks replies up
  and stores them through it, so the cache stays one folder on the driver's disk and the
  cluster needs no shared filesystem. ``RayResponseCache`` is the cache's interface over it,
  used by ``CachedClient`` unchanged.
* ``ProviderSlots`` holds each provider endpoint's gate for the whole cluster; a client's
  ``ClusterGate`` takes a slot around each call, so at most ``--provider-concurrency`` calls
  are in flight to a provider and ``--provider-rpm`` start in any minute however many nodes
  play, a 429's ``Retry-After`` holds back every node's calls, and a slot a dead worker held
  is taken back as soon as Ray knows the worker or its node gone (``ray_liveness``), at the
  latest when its lease runs out.

Each proxy pickles as the actor's name, so it travels to the workers with the episode and
finds the actor where it lands. The actors are pinned to the driver's node: a worker node
lost takes neither the cache nor the slots with it.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from llm_aai.execution.ray_executor import import_ray
from llm_aai.llm.cache import ResponseCache
from llm_aai.llm.provider_limits import WINDOW_S, ProviderPace
from llm_aai.llm.types import LLMResponse
from llm_aai.runner.ray_liveness import CHECK_EVERY_S, HolderLiveness

__all__ = ["CacheServer", "ClusterGate", "ProviderSlots", "RayResponseCache", "actor_name",
           "cluster_gate", "endpoint_key", "start_on_driver"]


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
    """The actor's body: each provider endpoint's gate for the whole cluster.

    Per endpoint it lends at most ``limit`` slots at once, starts at most ``rpm`` calls in any
    window (``ProviderPace``, the rolling window a local gate keeps too) and holds every call
    back while a pause that a 429's ``Retry-After`` asked lasts. Its methods are coroutines,
    so Ray runs them concurrently in the actor's event loop: an ``acquire`` waits for a
    ``release`` sent by another worker, as a thread waits on a semaphore locally, and the
    event loop makes each check-and-take one step.

    A slot is a lease: a worker that dies holding one (its process killed, its node lost)
    never gives it back, so a slot not released within its ``lease_s`` (the call's timeout
    and a margin: a call cannot outlive its timeout) is taken back. Sooner if Ray knows its
    holder gone: while a call waits for a slot, the actor asks Ray about the holders at most
    every ``CHECK_EVERY_S`` (``HolderLiveness``) and takes back the slots of those on a lost
    node or in a lost worker process at once.

    Args:
        window_s: the rate limit's window (``WINDOW_S``, read on the driver).
    """

    def __init__(self, window_s: float = WINDOW_S) -> None:
        self.window_s = window_s
        self._leases: dict[str, dict[int, tuple[float, dict[str, Any]]]] = {}
        self._paces: dict[str, ProviderPace] = {}
        self._freed: dict[str, asyncio.Condition] = {}
        self._next_lease = 0
        self._peak: dict[str, int] = {}
        self._checked_at: dict[str, float] = {}
        self.liveness = HolderLiveness()
        self.reclaimed = 0
        self.reclaimed_lost = {"node": 0, "worker": 0}
        self.lending = True

    def _pace(self, key: str, rpm: int | None) -> ProviderPace:
        """The endpoint's pace, made at its first call (or at a pause, the rate added later)."""
        pace = self._paces.setdefault(key, ProviderPace(rpm, self.window_s))
        pace.limit_rate(rpm)
        return pace

    def _expire(self, key: str, now: float) -> None:
        """Take back the leases of ``key`` that ran out; their calls ended by then at the latest."""
        leases = self._leases[key]
        for lease, (deadline, _) in list(leases.items()):
            if deadline <= now:
                del leases[lease]
                self._paces[key].finish(deadline)
                self.reclaimed += 1

    async def _reclaim_lost(self, key: str) -> None:
        """Take back the slots of ``key`` whose holders Ray knows to be gone (node or worker).

        Only slots of calls under way: one whose holder still waits for its turn is the
        actor's own ``acquire`` (it sets the lease's deadline when the turn comes).
        """
        self._checked_at[key] = time.monotonic()
        leases = self._leases[key]
        under_way = [(lease, holder) for lease, (deadline, holder) in leases.items()
                     if deadline != float("inf")]
        if not under_way:
            return
        reasons = await asyncio.to_thread(self.liveness.gone, [h for _, h in under_way])
        for (lease, _), reason in zip(under_way, reasons, strict=True):
            if reason is not None and lease in leases:  # not released meanwhile
                del leases[lease]
                self._paces[key].finish(time.monotonic())  # its call ended by now
                self.reclaimed_lost[reason] += 1

    async def acquire(self, key: str, limit: int, rpm: int | None, lease_s: float,
                      holder: dict[str, Any]) -> int:
        """Wait for a free slot of ``key``, then for the call's turn; the lease's number.

        The slot comes first: a call that had its turn and then waited for a slot would be
        counted in the window long before it was sent.
        """
        leases = self._leases.setdefault(key, {})
        freed = self._freed.setdefault(key, asyncio.Condition())
        pace = self._pace(key, rpm)
        await self._unless_stopping()
        async with freed:
            while self.lending:
                now = time.monotonic()
                self._expire(key, now)
                if len(leases) < limit:
                    break
                next_check = self._checked_at.get(key, float("-inf")) + CHECK_EVERY_S
                if now >= next_check:  # every slot taken: is any holder gone?
                    await self._reclaim_lost(key)
                    continue
                wake = min(next_check, *(deadline for deadline, _ in leases.values()))
                try:
                    await asyncio.wait_for(freed.wait(), max(0.0, wake - now))
                except TimeoutError:
                    pass  # a lease ran out, or time to ask Ray again: looked at again
            if self.lending:
                lease = self._next_lease = self._next_lease + 1
                leases[lease] = (float("inf"), holder)  # held while it waits for its turn
                self._peak[key] = max(self._peak.get(key, 0), len(leases))
        await self._unless_stopping()  # stopped while it waited for a slot
        while self.lending:  # check and count in one step of the event loop: nothing between
            now = time.monotonic()
            self._expire(key, now)  # a call in flight with a dead worker ends with its lease
            wait = pace.delay(now)
            if wait <= 0:
                break
            await asyncio.sleep(wait)
        if not self.lending:  # stopped while it waited for its turn
            leases.pop(lease, None)
            await self._unless_stopping()
        pace.start()
        leases[lease] = (now + lease_s, holder)
        return lease

    async def stop_lending(self) -> None:
        """The run is stopping: lend no slot from now on, to any call of any endpoint.

        Locally a stopping run's episodes check before each call and make none; on Ray they
        cannot see the driver's stop, but every call takes a slot first, so a call asking
        from now on waits for the stop to end its worker. A call that had its slot goes on,
        as one under way locally does.
        """
        self.lending = False
        for freed in self._freed.values():  # the calls waiting for a slot look again
            async with freed:
                freed.notify_all()

    async def _unless_stopping(self) -> None:
        """Return at once, or never once the run is stopping (its worker is being ended)."""
        if not self.lending:
            await asyncio.Event().wait()

    async def release(self, key: str, lease: int) -> None:
        """Give back a slot of ``key`` (nothing if its lease had run out and was taken back)."""
        if self._leases[key].pop(lease, None) is not None:
            self._paces[key].finish(time.monotonic())
        async with self._freed[key]:
            self._freed[key].notify_all()

    async def pause(self, key: str, seconds: float) -> None:
        """Start no call to ``key`` for ``seconds`` (a 429's Retry-After seen by a worker)."""
        self._pace(key, None).pause(time.monotonic() + seconds)

    async def holders(self) -> dict[str, list[dict[str, Any]]]:
        """Who holds each endpoint's slots now (each holder's node, worker and process id)."""
        return {key: [holder for _, holder in leases.values()]
                for key, leases in self._leases.items()}

    async def peak(self) -> dict[str, int]:
        """The most slots each endpoint ever had lent at once."""
        return dict(self._peak)

    async def reclaims(self) -> dict[str, Any]:
        """Slots taken back so far, by why: lease run out, node lost, worker lost.

        Also whether lost workers are looked for at all (``HolderLiveness.worker_check``).
        """
        return {"expired": self.reclaimed, "node lost": self.reclaimed_lost["node"],
                "worker lost": self.reclaimed_lost["worker"],
                "worker check": self.liveness.worker_check}


class ClusterGate(_ByName):
    """A client's provider gate (``llm_aai.llm.client.ProviderGate``) held by ``ProviderSlots``.

    ``EpisodeKit`` gives each model client of a worker one in place of the process's own, so
    every call on every node takes one of its endpoint's slots, waits for its turn and heeds a
    pause any worker reported.

    Args:
        name: the ``ProviderSlots`` actor's name.
        key: the provider endpoint (``endpoint_key``).
        limit: slots of the endpoint (``--provider-concurrency``).
        rpm: calls per window (``--provider-rpm``; None: no limit).
    """

    def __init__(self, name: str, key: str, limit: int, rpm: int | None) -> None:
        super().__init__(name)
        self.key, self.limit, self.rpm = key, limit, rpm

    def __getstate__(self) -> dict:
        return {"name": self.name, "key": self.key, "limit": self.limit, "rpm": self.rpm}

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        self.key, self.limit, self.rpm = state["key"], state["limit"], state["rpm"]

    @contextmanager
    def turn(self, lease_s: float) -> Iterator[None]:
        """Hold a slot of the cluster's for the ``with`` body (lent for ``lease_s``)."""
        ray = import_ray()
        context = ray.get_runtime_context()
        holder = {"node_id": context.get_node_id(), "worker_id": context.get_worker_id(),
                  "pid": os.getpid()}
        lease = self._call("acquire", self.key, self.limit, self.rpm, lease_s, holder)
        try:
            yield
        finally:
            self._call("release", self.key, lease)

    def pause(self, seconds: float) -> None:
        """Hold back every call to the endpoint, on every node, for ``seconds``."""
        self._call("pause", self.key, seconds)


def endpoint_key(client: Any) -> str:
    """The provider endpoint a client's calls are counted for: its provider and base URL."""
    provider = getattr(getattr(client, "spec", None), "provider", client.model)
    return f"{provider}|{getattr(client, 'api_base', None) or ''}"


def cluster_gate(client: Any, name: str) -> ClusterGate:
    """The gate of ``client``'s endpoint held by the ``ProviderSlots`` actor ``name``."""
    return ClusterGate(name, endpoint_key(client), int(client.max_concurrent),
                       getattr(client, "requests_per_minute", None))
