"""The shared index informer: Reflector -> DeltaFIFO -> process loop -> indexer + listeners.

Kubernetes piece: client-go tools/cache/shared_informer.go (sharedIndexInformer) and
controller.go (controller.Run, processLoop, processDeltas) — the flow seed 004 draws from
`sharedIndexInformer.Run`: the Reflector lists and watches and feeds a DeltaFIFO whose
KnownObjects is the informer's indexer; the process loop pops one object's deltas at a time,
applies them to the indexer, and hands each to the listeners (handlers.py). A re-list after a
410 or a lost connection is therefore reconciled against the cache by the DeltaFIFO: objects
that vanished while the watch was down come out as deletes carrying
`DeletedFinalStateUnknown`. One informer per resource serves many handlers, each with its own
resync period (the factory, factory.py, shares them).

Single event loop: the Reflector task produces; the process loop consumes as the DeltaFIFO's
`on_ready` hook, in the Reflector's call (see `process_loop` for why not a separate task).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import structlog

from ..resources import Resource
from ..rest import Client
from .delta_fifo import (
    DELETED,
    DeletedFinalStateUnknown,
    DeltaFIFO,
    Deltas,
    Transformer,
)
from .handlers import (
    MINIMUM_RESYNC_PERIOD,
    Listener,
    OnAdd,
    OnDelete,
    OnUpdate,
    ResourceEventHandler,
    SharedProcessor,
    determine_resync_period,
)
from .listers import Lister
from .reflector import Reflector
from .store import Indexer, IndexFunc

log = structlog.get_logger(component="client")

Obj = dict[str, Any]
Transform = Transformer

__all__ = ["Informer", "OnAdd", "OnDelete", "OnUpdate", "strip_managed_fields"]


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
    """Upstream SharedIndexInformer (NewSharedIndexInformer(lw, obj, resyncPeriod, indexers))."""

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
        resync_period: float = 0.0,
    ) -> None:
        """`transform` edits each object once before it is cached and handed to handlers (it
        owns the object: every event decodes a new one); None caches objects as served.
        `resync_period` is the default for handlers registered without one and the initial
        resync check period; 0 (the default) means this informer never resyncs."""
        self.resource = resource
        self.transform = transform
        self.indexer = Indexer(indexers)
        self.fifo = DeltaFIFO(known_objects=self.indexer, emit_delta_type_replaced=True,
                              transformer=transform)
        self.processor = SharedProcessor(resource.plural)
        self.default_resync_period = resync_period
        self.resync_check_period = resync_period
        self.reflector = Reflector(client, resource, self.fifo, namespace=namespace,
                                   label_selector=label_selector, field_selector=field_selector,
                                   should_resync=self.processor.should_resync)
        self._synced = asyncio.Event()
        self._tasks: list[asyncio.Task] = []
        self._processing = False
        self._handle = self.handle_deltas  # bound once: _process passes it per event
        self._is_synced = False  # _synced.is_set() without the call, checked per event
        self.started = False

    # -- handlers ------------------------------------------------------------------------
    def add_event_handler(self, on_add: OnAdd | ResourceEventHandler | None = None,
                          on_update: OnUpdate | None = None, on_delete: OnDelete | None = None,
                          *, resync_period: float | None = None) -> Listener:
        """Register a handler: either a ResourceEventHandler object (upstream
        AddEventHandlerWithResyncPeriod; `on_delete` may get a DeletedFinalStateUnknown) or
        up to three functions (`on_delete` gets the last known object of a tombstone).
        `resync_period` defaults to the informer's. A handler added once objects are cached
        is told of each of them as an add (in the initial list)."""
        requested = self.default_resync_period if resync_period is None else resync_period
        if requested > 0:
            requested = max(requested, MINIMUM_RESYNC_PERIOD)
            if requested < self.resync_check_period:
                if self.started:
                    log.warning("resync period is smaller than the resync check period and "
                                "the informer has already started; using the check period",
                                resource=self.resource.plural, resync_period=requested,
                                resync_check_period=self.resync_check_period)
                    requested = self.resync_check_period
                else:
                    self.resync_check_period = requested
                    self.processor.resync_check_period_changed(requested)
        kwargs = {"requested_resync_period": requested,
                  "resync_period": determine_resync_period(requested, self.resync_check_period),
                  "now": self.processor.clock()}
        if on_add is not None and not callable(on_add):
            listener = Listener.for_handler(on_add, **kwargs)
        else:
            listener = Listener.for_funcs(on_add, on_update, on_delete, **kwargs)
        self.processor.add_listener(listener)
        add = listener.add
        if add is not None:
            for obj in self.indexer.list():
                try:
                    add(obj, True) if listener.add_wants_initial else add(obj)
                except Exception:
                    log.exception("informer handler failed", resource=self.resource.plural)
        return listener

    def remove_event_handler(self, registration: Listener) -> None:
        self.processor.remove_listener(registration)

    def lister(self) -> Lister:
        """Reads over the cache: get by name, list by label selector, per namespace."""
        return Lister(self.indexer, self.resource)

    # -- running -------------------------------------------------------------------------
    def start(self) -> None:
        """Run the Reflector (producer) and the process loop (consumer)."""
        if self._tasks:
            return
        self.started = True
        self.reflector.resync_period = self.resync_check_period
        self.fifo.on_ready = self._process  # attached now: before the Reflector's first list
        name = self.resource.plural
        self._tasks = [asyncio.create_task(self.process_loop(), name=f"informer-loop:{name}"),
                       asyncio.create_task(self.reflector.run(), name=f"informer:{name}")]

    async def stop(self) -> None:
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        for task in tasks:
            try:
                await task
            except asyncio.CancelledError:
                pass

    async def wait_for_sync(self, timeout: float | None = None) -> None:
        await asyncio.wait_for(self._synced.wait(), timeout)

    @property
    def last_sync_resource_version(self) -> str:
        """The resourceVersion the Reflector last listed or watched to (upstream
        LastSyncResourceVersion)."""
        return self.reflector.last_resource_version

    @property
    def has_synced(self) -> bool:
        """The initial list is in the cache (upstream HasSynced: the DeltaFIFO popped it)."""
        return self.fifo.has_synced()

    async def process_loop(self) -> None:
        """Process the DeltaFIFO while this runs (upstream controller.processLoop), until
        cancelled. Upstream's consumer is a goroutine blocked in Pop; here it is the
        DeltaFIFO's `on_ready` hook: whatever the Reflector queues is popped, applied to the
        indexer and handed to the listeners before the Reflector's call returns (a re-list
        first queues the whole list and its tombstones, then the hook drains them). Why not
        a task or a loop callback: on one event loop they buy no parallelism, each informer
        hop would wait one more loop iteration (a pod crosses several on its way to
        Running), and a lone event cost 23.3 µs of CPU through a deferred consumer against
        19.4 through this hook (bench/informer.py, batch 1)."""
        fifo = self.fifo
        fifo.on_ready = self._process
        try:
            self._process()
            await asyncio.get_running_loop().create_future()
        finally:
            if fifo.on_ready == self._process:
                fifo.on_ready = None

    def _process(self) -> None:
        """Drain the DeltaFIFO. Re-entrant calls (a handler feeding this informer by hand)
        return at once: the running drain picks up what they queued."""
        if self._processing:
            return
        self._processing = True
        fifo = self.fifo
        try:
            while fifo.queue:
                try:
                    fifo.drain(self._handle)
                except Exception:  # an index function that raised: log, keep going
                    log.exception("informer failed to process deltas",
                                  resource=self.resource.plural)
        finally:
            self._processing = False
        if not self._is_synced and fifo.has_synced():
            self._is_synced = True
            self._synced.set()

    def handle_deltas(self, deltas: Deltas, is_in_initial_list: bool) -> None:
        """Apply one object's deltas to the indexer, oldest first, and notify (upstream
        processDeltas with the informer as handler)."""
        indexer, processor = self.indexer, self.processor
        for kind, obj in deltas:
            if kind == DELETED:
                if isinstance(obj, DeletedFinalStateUnknown):
                    indexer.delete_key(obj.key)
                else:
                    indexer.delete(obj)
                processor.on_delete(obj)
                continue
            old = indexer.add(obj)
            if old is None:
                processor.on_add(obj, is_in_initial_list)
            else:
                processor.on_update(old, obj)

    # -- feeding by hand --------------------------------------------------------------------
    # The Reflector's store interface on the informer itself, for a caller that feeds it
    # directly (tests, a component with its own source): each change goes through the
    # DeltaFIFO and is processed at once, as the process loop would.
    def replace(self, objects: list[Obj], resource_version: str = "") -> None:
        self.fifo.replace(objects, resource_version)
        self._process()

    def add(self, obj: Obj) -> None:
        self.fifo.add(obj)
        self._process()

    def update(self, obj: Obj) -> None:
        self.fifo.update(obj)
        self._process()

    def delete(self, obj: Obj) -> None:
        self.fifo.delete(obj)
        self._process()

    def resync(self) -> None:
        self.fifo.resync()
        self._process()
