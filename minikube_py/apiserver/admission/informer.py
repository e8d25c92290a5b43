"""An in-process informer: the current objects under one store prefix, kept by a watch.

Kubernetes piece: client-go's shared informer + lister as the admission plugins use them
(upstream's policy and webhook plugins read policies, bindings, webhook configurations and
namespaces from informers, never from etcd per request). Here the API server's own store is listed once and watched from the list's
revision; every event replaces or removes one entry, and `version` counts changes so a caller
can cache what it derived from the contents (the plugin's compiled policy hooks). A watch that
ends or whose history was compacted is replaced by a fresh list + watch, as a reflector
re-lists on 410.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

import structlog

from ...registry import codec
from ...storage import CompactedError, EventType, StorageError, Store

log = structlog.get_logger(component="apiserver.admission.informer")

Obj = dict[str, Any]
#: what `items` holds per key when the informer keeps no objects (shared, never written)
_KEY_ONLY: Obj = {}


class StoreInformer:
    """`items` maps a store key to its decoded object; read it, never write it.

    `keep_objects=False` is for a consumer that only needs the key listeners (the Node
    authorizer's graph keeps what it derives from each pod): `items` then maps each key to an
    empty dict, so the informer does not hold a decoded copy of every pod — at 50,000 pods a
    copy is ~0.5 GiB.

    `project` keeps a compact view of each object instead (the admission listers keep a
    namespace's phase, a service account's automount flag): key listeners still get the
    decoded object, `items` holds what `project` returned."""

    def __init__(self, store: Store, prefix: str, name: str, *, keep_objects: bool = True,
                 project: Callable[[Obj], Obj] | None = None) -> None:
        self.store = store
        self.prefix = prefix
        self.name = name
        self.keep_objects = keep_objects
        self._project = project if project is not None else (
            None if keep_objects else (lambda obj: _KEY_ONLY))
        self.items: dict[str, Obj] = {}
        #: true once the first list is in `items` (a lister falls back to live reads before)
        self.synced = False
        #: bumped on every change of `items`
        self.version = 0
        self._revision = 0
        self._task: asyncio.Task | None = None
        #: called (synchronously, on the loop) after every change of `items`
        self.listeners: list[Callable[[], None]] = []
        #: called (synchronously, on the loop) per changed key with its new object, None when
        #: deleted, before `listeners` — for caches kept incrementally (the Node authorizer's
        #: graph); a re-list reports every listed key and the keys it no longer has
        self.key_listeners: list[Callable[[str, Obj | None], None]] = []

    async def start(self) -> None:
        """List, then watch in the background; returns once the cache is synced."""
        watch = await self._relist()
        self._task = asyncio.create_task(self._run(watch), name=f"informer:{self.name}")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    @property
    def revision(self) -> int:
        """The store revision the cache reflects (tests wait on it)."""
        return self._revision

    def by_name(self, namespace: str, name: str) -> Obj | None:
        """The object `namespace/name` (cluster-scoped: namespace "")."""
        key = f"{self.prefix}{namespace}/{name}" if namespace else f"{self.prefix}{name}"
        return self.items.get(key)

    async def _relist(self) -> Any:
        result = await self.store.range(self.prefix)
        listed = {kv.key: codec.decode(kv) for kv in result.kvs}
        project = self._project
        previous = self.items
        self.items = listed if project is None else {k: project(o) for k, o in listed.items()}
        self._revision = result.revision
        self.synced = True
        for listener in self.key_listeners:
            for key in previous.keys() - listed.keys():
                listener(key, None)
            for key, obj in listed.items():
                listener(key, obj)
        self._changed()
        return await self.store.watch(self.prefix, start_revision=result.revision + 1)

    async def _run(self, watch: Any) -> None:
        try:
            while True:
                try:
                    batch = await watch.next_batch()
                except StorageError as exc:
                    log.warning("informer watch failed, re-listing", informer=self.name,
                                error=str(exc))
                    batch = []
                if not batch:
                    await watch.cancel()
                    watch = await self._restart()
                    continue
                for event in batch:
                    key = event.kv.key
                    if event.type is EventType.DELETE:
                        self.items.pop(key, None)
                        obj = None
                    else:
                        obj = codec.decode(event.kv)
                        self.items[key] = obj if self._project is None else self._project(obj)
                    self._revision = event.kv.mod_revision
                    for listener in self.key_listeners:
                        listener(key, obj)
                self._changed()
        finally:
            await watch.cancel()

    def _changed(self) -> None:
        self.version += 1
        for listener in self.listeners:
            listener()

    async def _restart(self) -> Any:
        while True:
            try:
                return await self.store.watch(self.prefix, start_revision=self._revision + 1)
            except CompactedError:
                try:
                    return await self._relist()
                except StorageError:
                    await asyncio.sleep(0.5)
            except StorageError:
                await asyncio.sleep(0.5)
