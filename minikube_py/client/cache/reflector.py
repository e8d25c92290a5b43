"""The reflector: list, then watch from the list's resourceVersion, forever.

Kubernetes v1.0 piece: pkg/client/cache/reflector.go (ListAndWatch). The contract every
controller relies on:
- list, hand the whole list to the store (`replace`) with its resourceVersion;
- watch from that resourceVersion, applying ADDED/MODIFIED/DELETED; BOOKMARKs only advance the
  resourceVersion;
- when a watch ends normally (server timeout), watch again from the last resourceVersion seen —
  no re-list;
- on 410 Expired (history compacted), re-list at once; on any other failure (connection lost,
  server restarting), re-list after a backoff that doubles from 0.8 s to 30 s (upstream's
  wait.Backoff for reflectors), reset after a healthy list;
- while a watch runs, every `resync_period` seconds (0: never) ask `should_resync` (the
  informer's listeners; upstream ShouldResync) and if it says so call the store's `resync`
  (upstream startResync: the DeltaFIFO re-queues the cache as Sync deltas).
The store is a DeltaFIFO (delta_fifo.py) when an informer owns the reflector.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from typing import Any, Protocol

import aiohttp
import structlog

from ...api.errors import StatusError
from ..resources import Resource
from ..rest import Client

log = structlog.get_logger(component="client")

Obj = dict[str, Any]


class ReflectorStore(Protocol):
    def replace(self, objects: list[Obj], resource_version: str) -> None: ...
    def add(self, obj: Obj) -> None: ...
    def update(self, obj: Obj) -> None: ...
    def delete(self, obj: Obj) -> None: ...
    def resync(self) -> None: ...


class Reflector:
    def __init__(
        self,
        client: Client,
        resource: Resource,
        store: ReflectorStore,
        *,
        namespace: str | None = None,
        label_selector: str = "",
        field_selector: str = "",
        backoff_initial: float = 0.8,
        backoff_max: float = 30.0,
        watch_timeout: tuple[int, int] = (300, 600),
        resync_period: float = 0.0,
        should_resync: Callable[[], bool] | None = None,
    ) -> None:
        self.client = client
        self.resource = resource
        self.store = store
        self.namespace = namespace
        self.label_selector = label_selector
        self.field_selector = field_selector
        self.backoff_initial = backoff_initial
        self.backoff_max = backoff_max
        self.watch_timeout = watch_timeout
        self.resync_period = resync_period
        self.should_resync = should_resync
        self.last_resource_version = ""
        self.synced = asyncio.Event()
        self.relists = 0

    async def run(self) -> None:
        """List and watch until cancelled."""
        delay = self.backoff_initial
        while True:
            try:
                await self.list_and_watch()
                delay = self.backoff_initial
            except StatusError as exc:
                if exc.code == 410:
                    log.info("watch expired, re-listing", resource=self.resource.plural,
                             resource_version=self.last_resource_version)
                    delay = self.backoff_initial
                    continue
                log.warning("list/watch failed", resource=self.resource.plural,
                            code=exc.code, error=exc.message)
            except (aiohttp.ClientError, OSError, asyncio.TimeoutError) as exc:
                log.warning("list/watch connection failed", resource=self.resource.plural,
                            error=repr(exc))
            await asyncio.sleep(delay)
            delay = min(delay * 2, self.backoff_max)

    async def list_and_watch(self) -> None:
        listed = await self.client.list(self.resource, self.namespace,
                                        label_selector=self.label_selector,
                                        field_selector=self.field_selector)
        rv = listed["metadata"]["resourceVersion"]
        self.relists += 1
        self.store.replace(listed.get("items") or [], rv)
        self.last_resource_version = rv
        self.synced.set()
        resyncer = (asyncio.create_task(self._resync_loop(), name=f"resync:{self.resource.plural}")
                    if self.resync_period > 0 else None)
        try:
            await self._watch()
        finally:
            if resyncer is not None:
                resyncer.cancel()

    async def _resync_loop(self) -> None:
        while True:
            await asyncio.sleep(self.resync_period)
            if self.should_resync is None or self.should_resync():
                log.debug("forcing resync", resource=self.resource.plural)
                self.store.resync()

    async def _watch(self) -> None:
        rv = self.last_resource_version
        while True:  # each pass is one watch request; a server-side timeout just re-watches
            async for event in self.client.watch(
                    self.resource, self.namespace, resource_version=self.last_resource_version,
                    label_selector=self.label_selector, field_selector=self.field_selector,
                    timeout_seconds=random.randint(*self.watch_timeout)):
                obj = event.object
                rv = (obj.get("metadata") or {}).get("resourceVersion") or rv
                if event.type == "ADDED":
                    self.store.add(obj)
                elif event.type == "MODIFIED":
                    self.store.update(obj)
                elif event.type == "DELETED":
                    self.store.delete(obj)
                self.last_resource_version = rv
