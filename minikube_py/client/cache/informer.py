"""An informer: a reflector feeding an indexed cache, and handlers told of every change.

Kubernetes piece: pkg/controller/framework (v1.0's NewInformer / NewIndexerInformer, later
client-go's SharedIndexInformer). One informer per resource can serve many handlers (the
shared informer factory of the all-in-one process). A re-list after a 410 is reconciled
against the cache, so handlers see adds, updates and deletes exactly as if they had watched
continuously (upstream's DeltaFIFO Replace with DeletedFinalStateUnknown).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

import structlog

from ..resources import Resource
from ..rest import Client
from .reflector import Reflector
from .store import Indexer, IndexFunc, meta_namespace_key

log = structlog.get_logger(component="client")

Obj = dict[str, Any]
OnAdd = Callable[[Obj], None]
OnUpdate = Callable[[Obj, Obj], None]
OnDelete = Callable[[Obj], None]
Transform = Callable[[Obj], Obj]


def strip_managed_fields(obj: Obj) -> Obj:
    """Drop metadata.managedFields before an object is cached (client-go's
    TransformStripManagedFields, which kube-scheduler and kube-controller-manager install).
    No component reads them, and they are a quarter of a running pod's memory in every
    cache; an update sent without them keeps the server's (the server carries them over)."""
    md = obj.get("metadata")
    if md and "managedFields" in md:
        del md["managedFields"]
    return obj


class Informer:
    def __init__(
        self,
        client: Client,
        resource: Resource,
        *,
        namespace: str | None = None,
        label_selector: str = "",
        field_selector: str = "",
        indexers: Mapping[str, IndexFunc] | None = None,
        transform: Transform | None = strip_managed_fields,
    ) -> None:
        """`transform` edits each object before it is cached and handed to handlers (it
        owns the object: every event decodes a new one); None caches objects as served."""
        self.resource = resource
        self.transform = transform
        self.indexer = Indexer(indexers)
        self.reflector = Reflector(client, resource, self, namespace=namespace,
                                   label_selector=label_selector, field_selector=field_selector)
        self._handlers: list[tuple[OnAdd | None, OnUpdate | None, OnDelete | None]] = []
        self._task: asyncio.Task | None = None

    def add_event_handler(self, on_add: OnAdd | None = None, on_update: OnUpdate | None = None,
                          on_delete: OnDelete | None = None) -> None:
        """Register handlers; a handler added after the first list is told of every object
        already cached, as an add (upstream AddEventHandler)."""
        self._handlers.append((on_add, on_update, on_delete))
        if on_add is not None:
            for obj in self.indexer.list():
                self._call(on_add, obj)

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self.reflector.run(),
                                             name=f"informer:{self.resource.plural}")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None

    async def wait_for_sync(self, timeout: float | None = None) -> None:
        await asyncio.wait_for(self.reflector.synced.wait(), timeout)

    @property
    def has_synced(self) -> bool:
        return self.reflector.synced.is_set()

    # -- the reflector's store interface ------------------------------------------------
    def replace(self, objects: list[Obj], resource_version: str) -> None:
        fresh = {meta_namespace_key(o): o for o in objects}
        stale = [o for k, o in self.indexer.items.items() if k not in fresh]
        for obj in stale:
            self.delete(obj)
        for obj in objects:
            self.update(obj)

    def add(self, obj: Obj) -> None:
        self.update(obj)

    def update(self, obj: Obj) -> None:
        if self.transform is not None:
            obj = self.transform(obj)
        old = self.indexer.add(obj)
        if old is None:
            for on_add, _, _ in self._handlers:
                if on_add is not None:
                    self._call(on_add, obj)
        elif old.get("metadata", {}).get("resourceVersion") != obj.get("metadata", {}).get(
                "resourceVersion"):
            for _, on_update, _ in self._handlers:
                if on_update is not None:
                    self._call(on_update, old, obj)

    def delete(self, obj: Obj) -> None:
        old = self.indexer.delete(obj)
        if old is None:
            return
        for _, _, on_delete in self._handlers:
            if on_delete is not None:
                self._call(on_delete, obj)

    def _call(self, handler: Callable[..., None], *args: Obj) -> None:
        try:
            handler(*args)
        except Exception:  # a broken handler must not stop the informer for everyone
            log.exception("informer handler failed", resource=self.resource.plural)
