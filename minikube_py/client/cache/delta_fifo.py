"""The DeltaFIFO: a queue of per-object change lists between a Reflector and an informer.

Kubernetes piece: client-go tools/cache/delta_fifo.go (the queue seed 004 shows
`sharedIndexInformer.Run` creating with `KnownObjects: s.indexer, EmitDeltaTypeReplaced:
true`). Why a queue of *deltas* rather than of objects (v1.0's FIFO, fifo.py): a consumer
must see every kind of change, deletes included, in order, while an object's key sits in the
queue once however many changes pile up behind it. What it adds over feeding the cache
directly:

- `replace` (a re-list) queues `Replaced` deltas for the listed objects and, for every object
  the consumer knows (`known_objects`, the informer's indexer) or has queued but the list
  lacks, a `Deleted` delta carrying a `DeletedFinalStateUnknown` tombstone — a delete that
  happened while the watch was down, whose final state we never saw;
- `resync` queues `Sync` deltas for every known object that has nothing queued (periodic
  resync re-delivers the cache to handlers that asked for it);
- consecutive deletes of one object collapse to one (a watch DELETED racing a relist's
  tombstone is reported once);
- `has_synced` turns true once the first `replace`'s items have all been popped (upstream
  HasSynced: the informer's cache holds the initial list).

Pure and single-threaded (the event loop is the lock). Two ways to consume: a task awaiting
`pop` (the only asyncio piece: the future it sleeps on), or a consumer attached as `on_ready`,
told when work arrives and popping at once with `drain` (the informer's process loop).
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple, Protocol

from .store import meta_namespace_key

Obj = dict[str, Any]

# DeltaType (upstream's string values)
ADDED = "Added"
UPDATED = "Updated"
DELETED = "Deleted"
#: a re-list found the object; we do not know whether it changed (EmitDeltaTypeReplaced)
REPLACED = "Replaced"
#: a synthetic event: periodic resync, or a re-list when Replaced is not emitted
SYNC = "Sync"


#: One change: `(type, object)`, the object's state after it (for a delete, the last state
#: seen, or a DeletedFinalStateUnknown); upstream Delta{Type, Object}. A plain pair, not a
#: class: one is made per watch event, on the hot path of every informer.
Delta = tuple[str, Any]
#: the changes queued for one object, oldest first
Deltas = list[Delta]


class DeletedFinalStateUnknown(NamedTuple):
    """An object deleted while the watch was down: `obj` is the last state we knew, which
    may be stale (upstream cache.DeletedFinalStateUnknown)."""

    key: str
    obj: Obj | None


class KnownObjects(Protocol):
    """What the consumer already holds (upstream KeyListerGetter): the informer's indexer."""

    def get(self, key: str) -> Obj | None: ...
    def keys(self) -> list[str]: ...


class Requeue(Exception):
    """Raised by a `pop` process function to put the item back (upstream ErrRequeue); `err`,
    if any, is raised from `pop` after the requeue."""

    def __init__(self, err: BaseException | None = None) -> None:
        super().__init__(str(err) if err else "requeue")
        self.err = err


class FIFOClosedError(Exception):
    """`pop` on a closed, empty queue (upstream ErrFIFOClosed)."""


#: process(deltas, is_in_initial_list); raise Requeue to retry the item later
PopProcess = Callable[[Deltas, bool], None]
KeyFunc = Callable[[Obj], str]
Transformer = Callable[[Obj], Obj]


def _dedup(deltas: Deltas) -> None:
    """Collapse the two newest deltas when both are deletes (upstream dedupDeltas and
    isDeletionDup): keep the older one unless it is a tombstone, since a real final state
    beats a guessed one."""
    a, b = deltas[-1], deltas[-2]
    if a[0] == DELETED and b[0] == DELETED:
        keep = a if isinstance(b[1], DeletedFinalStateUnknown) else b
        deltas[-2:] = [keep]


class DeltaFIFO:
    def __init__(self, *, key_func: KeyFunc = meta_namespace_key,
                 known_objects: KnownObjects | None = None,
                 emit_delta_type_replaced: bool = False,
                 transformer: Transformer | None = None) -> None:
        """`transformer` edits each object once as it enters the queue (not tombstones, not
        Sync deltas, whose objects came from the cache already transformed)."""
        self.key_func = key_func
        self.known_objects = known_objects
        self.emit_delta_type_replaced = emit_delta_type_replaced
        self.transformer = transformer
        self.items: dict[str, Deltas] = {}
        self.queue: collections.deque[str] = collections.deque()
        #: something was added (or replace was called), so the initial population is known
        self.populated = False
        #: items of the first replace not yet popped
        self.initial_population_count = 0
        self.closed = False
        #: the consumer, called when work arrives (a key joins the queue, a replace or resync is
        #: done, close): the informer's process loop pops at once; a task in `wait` sets one
        #: that wakes it
        self.on_ready: Callable[[], None] | None = None
        #: inside replace/resync: the consumer is told once, at the end
        self._batching = False

    def __len__(self) -> int:
        return len(self.queue)

    # -- keys --------------------------------------------------------------------------
    def key_of(self, obj: Any) -> str:
        """The key for an object, a tombstone, or a Deltas list (its newest object)."""
        if isinstance(obj, list):
            if not obj:
                raise ValueError("0 length Deltas object; can't get key")
            obj = obj[-1][1]
        if isinstance(obj, DeletedFinalStateUnknown):
            return obj.key
        return self.key_func(obj)

    def has_synced(self) -> bool:
        """True once the first replace (or any add/update/delete first) is fully popped."""
        return self.populated and self.initial_population_count == 0

    # -- producers (the Reflector's store interface) -----------------------------------------
    def add(self, obj: Obj) -> None:
        self.populated = True
        if self.transformer is not None:
            obj = self.transformer(obj)
        self._queue(ADDED, obj, self.key_func(obj))

    def update(self, obj: Obj) -> None:
        self.populated = True
        if self.transformer is not None:
            obj = self.transformer(obj)
        self._queue(UPDATED, obj, self.key_func(obj))

    def delete(self, obj: Obj) -> None:
        """Queue a delete, unless neither the queue nor the consumer knows the object (a
        relist already reported it: no second report of one deletion)."""
        key = self.key_of(obj)
        self.populated = True
        if key not in self.items:
            known = self.known_objects
            if known is None or known.get(key) is None:
                return
        if self.transformer is not None and not isinstance(obj, DeletedFinalStateUnknown):
            obj = self.transformer(obj)
        self._queue(DELETED, obj, key)

    def add_if_not_present(self, deltas: Deltas) -> None:
        """Requeue popped deltas unless newer ones for the object arrived meanwhile."""
        if self.closed:
            return
        self._add_if_not_present(self.key_of(deltas), deltas)

    def replace(self, objects: Iterable[Obj], resource_version: str = "") -> None:
        """A re-list: Replaced (or Sync) for every listed object, tombstones for every
        object queued or known that the list lacks."""
        action = REPLACED if self.emit_delta_type_replaced else SYNC
        keys: set[str] = set()
        self._batching = True
        try:
            queued_deletions = self._replace(objects, action, keys)
        finally:
            self._batching = False
        if not self.populated:
            self.populated = True
            self.initial_population_count = len(keys) + queued_deletions
        self._notify()  # once, after the whole list; even an empty one (has_synced changed)

    def _replace(self, objects: Iterable[Obj], action: str, keys: set[str]) -> int:
        for obj in objects:
            key = self.key_func(obj)
            keys.add(key)
            if self.transformer is not None:
                obj = self.transformer(obj)
            self._queue(action, obj, key)
        queued_deletions = 0
        for key, deltas in list(self.items.items()):
            if key in keys:
                continue
            last = deltas[-1][1]
            if isinstance(last, DeletedFinalStateUnknown):
                last = last.obj
            queued_deletions += 1
            self._queue(DELETED, DeletedFinalStateUnknown(key, last), key)
        if self.known_objects is not None:
            for key in self.known_objects.keys():
                if key in keys or self.items.get(key):
                    continue
                queued_deletions += 1
                self._queue(DELETED, DeletedFinalStateUnknown(key, self.known_objects.get(key)),
                            key)
        return queued_deletions

    def resync(self) -> None:
        """Sync deltas for every known object with nothing queued (a queued change would
        be older than the cache's object: re-sending the cache's copy would go back in
        time)."""
        known = self.known_objects
        if known is None:
            return
        self._batching = True
        try:
            for key in known.keys():
                obj = known.get(key)
                if obj is None or self.items.get(key):
                    continue
                self._queue(SYNC, obj, key)  # from the cache: transformed already
        finally:
            self._batching = False
        self._notify()

    # -- consumers -------------------------------------------------------------------------
    def pop_nowait(self, process: PopProcess) -> Deltas | None:
        """Process the oldest item with `process(deltas, is_in_initial_list)`; None when the
        queue is empty. The item is removed before `process` runs; raising Requeue puts it
        back (unless newer deltas arrived) and re-raises its error, if any."""
        return self.drain(process, 1)

    def drain(self, process: PopProcess, limit: int | None = None) -> Deltas | None:
        """pop_nowait for every item queued now (or the first `limit`), in one call: no call
        per item. Items queued meanwhile, a requeued one included, wait for the next drain.
        Returns the last deltas processed."""
        queue, items = self.queue, self.items
        if limit is None:
            limit = len(queue)
        last = None
        while limit > 0 and queue:
            key = queue.popleft()
            count = self.initial_population_count
            if count > 0:  # still popping the first replace: not synced yet
                initial = True
                self.initial_population_count = count - 1
            else:
                initial = not self.populated
            deltas = items.pop(key, None)
            if deltas is None:
                continue
            limit -= 1
            try:
                process(deltas, initial)
            except Requeue as requeue:
                self._add_if_not_present(key, deltas)
                if requeue.err is not None:
                    raise requeue.err from None
            last = deltas
        return last

    async def pop(self, process: PopProcess) -> Deltas:
        """Like pop_nowait, waiting for an item; FIFOClosedError once closed and empty."""
        while True:
            if self.queue:
                deltas = self.pop_nowait(process)
                if deltas is not None:
                    return deltas
                continue
            if self.closed:
                raise FIFOClosedError("DeltaFIFO: manipulating with closed queue")
            await self.wait()

    async def wait(self) -> None:
        """Until something is queued (or replace/close is called); at once if the queue is
        not empty. One waiter at a time (a task consuming with `pop`)."""
        if self.queue or self.closed:
            return
        if self.on_ready is not None:
            raise RuntimeError("DeltaFIFO: a consumer is attached (on_ready); pop is not for it")
        waiter = asyncio.get_running_loop().create_future()

        def wake() -> None:
            if not waiter.done():
                waiter.set_result(None)

        self.on_ready = wake
        try:
            await waiter
        finally:
            self.on_ready = None

    def close(self) -> None:
        self.closed = True
        self._notify()

    def _notify(self) -> None:
        if self.on_ready is not None:
            self.on_ready()

    # -- reads -----------------------------------------------------------------------------
    def list(self) -> list[Any]:
        """The newest object of every queued item."""
        return [deltas[-1][1] for deltas in self.items.values()]

    def list_keys(self) -> list[str]:
        return list(self.items)

    def get_by_key(self, key: str) -> Deltas | None:
        """A copy of the deltas queued for `key`."""
        deltas = self.items.get(key)
        return list(deltas) if deltas is not None else None

    def get(self, obj: Any) -> Deltas | None:
        return self.get_by_key(self.key_of(obj))

    # -- internals -------------------------------------------------------------------------
    def _queue(self, action: str, obj: Any, key: str) -> None:
        """Append a delta (upstream queueActionInternalLocked; callers transform first) and,
        when the key joins the queue, tell the consumer (unless inside replace/resync)."""
        deltas = self.items.get(key)
        if deltas is None:
            self.items[key] = [(action, obj)]
            self.queue.append(key)
            if self.on_ready is not None and not self._batching:
                self.on_ready()
        else:
            deltas.append((action, obj))
            if action == DELETED:
                _dedup(deltas)

    def _add_if_not_present(self, key: str, deltas: Deltas) -> None:
        self.populated = True
        if key in self.items:
            return
        self.queue.append(key)
        self.items[key] = deltas
        self._notify()
