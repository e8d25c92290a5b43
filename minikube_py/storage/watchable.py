"""Watchers of the embedded store: bounded buffers, synced and unsynced groups, one catch-up loop.

Kubernetes v1.0 piece: etcd's watchable store (mvcc/watchable_store.go), which the v1.0
apiserver's watch (pkg/tools/etcd_watcher.go) rode on. The rules are etcd's:

- A *synced* watcher has seen everything up to the last durable revision; each newly durable
  event is offered to it directly (`notify`), with no await between the revision becoming
  durable and the offer, so events cannot be reordered.
- A watcher whose bounded buffer is full is not waited for: it becomes *unsynced*, remembering
  the revision it must resume from. So does a watcher that starts in the past.
- One loop (`_catch_up_loop`) feeds unsynced watchers from the event history as their buffers
  drain, and moves each back to the synced group once it reaches the durable revision.
- A watcher whose resume point falls out of the history is ended with CompactedError; one
  whose consumer leaves its buffer full for `stall_timeout` seconds is ended with
  WatchCancelledError. Neither can grow memory or slow writers and other watchers.

A revision's events are delivered together: a buffer may overflow to finish a revision (a lease
revocation deletes several keys at one revision), so resume points are whole revisions.
"""

from __future__ import annotations

import asyncio
import time
from typing import Callable

from . import metrics
from .errors import CompactedError, StorageError, WatchCancelledError
from .eventbuffer import EventBuffer
from .kv import Event
from .mvcc import MVCCState


class Watcher(EventBuffer):
    """One watch on a key prefix (implements the storage `Watch` protocol)."""

    __slots__ = (
        "_hub",
        "capacity",
        "full_since",
        "last_revision",
        "prefix",
        "resume_revision",
        "start_revision",
        "synced",
    )

    def __init__(self, hub: "WatcherHub", prefix: str, start_revision: int, capacity: int) -> None:
        super().__init__()
        self.prefix = prefix
        self.start_revision = start_revision
        self.resume_revision = start_revision
        self.last_revision = 0
        self.capacity = capacity
        self.synced = False
        self.full_since: float | None = None
        self._hub = hub

    # --------------------------------------------------------------- producer side (hub)

    def offer(self, event: Event) -> bool:
        """Buffer `event` if there is room (or it completes a revision already started)."""
        if len(self.buffer) >= self.capacity and event.kv.mod_revision != self.last_revision:
            return False
        self.buffer.append(event)
        self.last_revision = event.kv.mod_revision
        self.wake()
        return True

    def end(self, error: StorageError | None) -> None:
        """Stop the watch: the consumer gets what is buffered, then `error` (or the end)."""
        if not self.finish(error):
            return
        metrics.WATCHERS.dec()
        if error is None:
            self.buffer.clear()

    # ------------------------------------------------------------- consumer side (Watch)

    def _taken(self) -> None:
        self.full_since = None
        if not self.synced and not self.done:
            self._hub.wake()

    async def cancel(self) -> None:
        self._hub.remove(self)
        self.end(None)


class WatcherHub:
    """All watchers of one store. `notify(revision)` is called by the store each time the WAL
    makes revisions durable."""

    def __init__(
        self,
        state: MVCCState,
        *,
        buffer_size: int = 1024,
        stall_timeout: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._state = state
        self._buffer_size = buffer_size
        self._stall_timeout = stall_timeout
        self._clock = clock
        #: prefix -> watchers on it; events are matched once per distinct prefix.
        self._synced: dict[str, set[Watcher]] = {}
        self._unsynced: set[Watcher] = set()
        self.durable_revision = state.revision
        self._wakeup = asyncio.Event()
        self._task = asyncio.get_running_loop().create_task(self._catch_up_loop(), name="watch-catch-up")

    @property
    def count(self) -> int:
        return sum(len(group) for group in self._synced.values()) + len(self._unsynced)

    def add(self, prefix: str, start_revision: int) -> Watcher:
        """Register a watcher; start_revision 0 means from the next revision.

        Raises CompactedError if the history it needs is gone.
        """
        if start_revision <= 0:
            start_revision = self._state.revision + 1
        if start_revision < self._state.compact_revision:
            raise CompactedError(start_revision, self._state.compact_revision)
        watcher = Watcher(self, prefix, start_revision, self._buffer_size)
        metrics.WATCHERS.inc()
        if start_revision > self.durable_revision:
            self._make_synced(watcher)
        else:
            self._unsynced.add(watcher)
            self.wake()
        return watcher

    def remove(self, watcher: Watcher) -> None:
        """Take a watcher out of its group (it stays registered if it is only moving)."""
        self._unsynced.discard(watcher)
        group = self._synced.get(watcher.prefix)
        if group is not None:
            group.discard(watcher)
            if not group:
                del self._synced[watcher.prefix]
        watcher.synced = False

    def wake(self) -> None:
        self._wakeup.set()

    def _make_synced(self, watcher: Watcher) -> None:
        self._unsynced.discard(watcher)
        watcher.synced = True
        self._synced.setdefault(watcher.prefix, set()).add(watcher)

    def _make_unsynced(self, watcher: Watcher, resume_revision: int) -> None:
        self.remove(watcher)
        watcher.resume_revision = resume_revision
        if watcher.full_since is None:
            watcher.full_since = self._clock()
        self._unsynced.add(watcher)

    # ------------------------------------------------------------------ live delivery

    def notify(self, revision: int) -> None:
        """Offer events up to `revision` (now durable) to synced watchers, in order."""
        if revision <= self.durable_revision:
            return
        state = self._state
        events = state.events
        first = state.events_from(self.durable_revision + 1)
        self.durable_revision = revision
        if not self._synced:
            return
        lagging: list[tuple[Watcher, int]] = []
        for i in range(first, len(events)):
            event = events[i]
            event_revision = event.kv.mod_revision
            if event_revision > revision:
                break
            key = event.kv.key
            for prefix, group in self._synced.items():
                if not key.startswith(prefix):
                    continue
                for watcher in group:
                    if (
                        watcher.synced
                        and event_revision >= watcher.start_revision
                        and not watcher.offer(event)
                    ):
                        watcher.synced = False
                        lagging.append((watcher, event_revision))
        for watcher, resume in lagging:
            self._make_unsynced(watcher, resume)
        if lagging:
            self.wake()

    # --------------------------------------------------------------- catch-up delivery

    async def _catch_up_loop(self) -> None:
        while True:
            await self._wakeup.wait()
            self._wakeup.clear()
            self.catch_up()
            if self._unsynced:
                # Re-check periodically: stalled consumers must time out even if nothing wakes us.
                asyncio.get_running_loop().call_later(
                    min(1.0, self._stall_timeout / 4), self._wakeup.set
                )

    def catch_up(self) -> None:
        """Feed every unsynced watcher that has room from the event history."""
        state = self._state
        now = self._clock()
        for watcher in list(self._unsynced):
            if watcher.resume_revision < state.compact_revision:
                self.remove(watcher)
                watcher.end(CompactedError(watcher.resume_revision, state.compact_revision))
                continue
            if len(watcher.buffer) >= watcher.capacity:
                if watcher.full_since is not None and now - watcher.full_since > self._stall_timeout:
                    self.remove(watcher)
                    watcher.end(
                        WatchCancelledError(
                            f"watch on {watcher.prefix!r} cancelled: its consumer left "
                            f"{len(watcher.buffer)} events unread for over {self._stall_timeout:g}s"
                        )
                    )
                continue
            self._feed(watcher)

    def _feed(self, watcher: Watcher) -> None:
        state = self._state
        events = state.events
        prefix = watcher.prefix
        durable = self.durable_revision
        i = state.events_from(watcher.resume_revision)
        n = len(events)
        while i < n:
            event = events[i]
            event_revision = event.kv.mod_revision
            if event_revision > durable:
                break
            if event.kv.key.startswith(prefix) and not watcher.offer(event):
                watcher.resume_revision = event_revision
                watcher.full_since = self._clock()
                return
            i += 1
        watcher.resume_revision = durable + 1
        watcher.full_since = None
        self._make_synced(watcher)

    async def close(self, error: StorageError) -> None:
        self._task.cancel()
        try:
            await self._task
        except asyncio.CancelledError:
            pass
        for watcher in list(self._unsynced) + [w for g in self._synced.values() for w in g]:
            self.remove(watcher)
            watcher.end(error)
