"""A filtered view of a shared informer: what an informer with a field selector would see,
computed in the client from an unfiltered one.

Kubernetes piece: none directly — upstream components in one process (kube-scheduler's
unassigned/assigned pod informers, a kubelet's `spec.nodeName=` watch) each open their own
filtered watch. DESIGN.md's scale mechanic for the all-in-one process is one informer per
resource shared by every component; this view gives each component the events its own
field selector would have produced: an object that stops matching is a delete, one that
starts matching an add. The objects are the shared informer's: never mutate them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .informer import Informer, OnAdd, OnDelete, OnUpdate

Obj = dict[str, Any]
Predicate = Callable[[Obj], bool]


class FilteredIndex:
    """The read side (`get`, `list`, `len`) of the view, over the shared cache."""

    def __init__(self, informer: Informer, predicate: Predicate) -> None:
        self._informer, self._predicate = informer, predicate

    def get(self, key: str) -> Obj | None:
        obj = self._informer.indexer.get(key)
        return obj if obj is not None and self._predicate(obj) else None

    def list(self) -> list[Obj]:
        return [o for o in self._informer.indexer.list() if self._predicate(o)]

    def __len__(self) -> int:
        return sum(1 for o in self._informer.indexer.items.values() if self._predicate(o))


class FilteredInformer:
    """Informer-shaped: handlers, `indexer`, start/wait; `stop` leaves the shared informer
    running (its owner stops it) and silences this view's handlers."""

    def __init__(self, informer: Informer, predicate: Predicate) -> None:
        self.base = informer
        self.predicate = predicate
        self.resource = informer.resource
        self.indexer = FilteredIndex(informer, predicate)
        self.active = True

    def add_event_handler(self, on_add: OnAdd | None = None, on_update: OnUpdate | None = None,
                          on_delete: OnDelete | None = None, *,
                          resync_period: float | None = None) -> None:
        """The shared informer's function-form handlers (a tombstone's last known object
        is what `on_delete` gets and what the predicate sees), filtered."""
        matches = self.predicate

        def added(obj: Obj) -> None:
            if self.active and on_add is not None and matches(obj):
                on_add(obj)

        def updated(old: Obj, new: Obj) -> None:
            if not self.active:
                return
            was, now = matches(old), matches(new)
            if was and now:
                if on_update is not None:
                    on_update(old, new)
            elif now:
                if on_add is not None:
                    on_add(new)
            elif was and on_delete is not None:
                on_delete(old)

        def deleted(obj: Obj) -> None:
            if self.active and on_delete is not None and matches(obj):
                on_delete(obj)

        self.base.add_event_handler(added, updated, deleted, resync_period=resync_period)

    def start(self) -> None:
        self.base.start()

    async def stop(self) -> None:
        self.active = False

    async def wait_for_sync(self, timeout: float | None = None) -> None:
        await self.base.wait_for_sync(timeout)

    @property
    def has_synced(self) -> bool:
        return self.base.has_synced
