"""The consumer half of a storage `Watch`: events a producer buffers, taken in batches.

Kubernetes piece: the channel between etcd's watch stream and the API server's watcher
(clientv3's `WatchChan`, drained by storage/etcd3's watcher.go). Here a producer that runs on
the same event loop appends events and wakes the one consumer, which takes everything
buffered at once (`next_batch`), so a busy loop turn hands over a whole batch, not an event
at a time. The embedded store's watchers (`watchable.Watcher`) and the remote store's
(`remote.client.RemoteWatch`) are both this, with their own producer side on top.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator

from .errors import StorageError
from .kv import Event


class EventBuffer:
    """A buffer of events with one waiting consumer; `finish` ends it, with or without an
    error the consumer gets once the buffer is drained."""

    __slots__ = ("_done", "_error", "_waiter", "buffer")

    def __init__(self) -> None:
        self.buffer: deque[Event] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._error: StorageError | None = None
        self._done = False

    # --------------------------------------------------------------------- producer side

    def wake(self) -> None:
        """Let the waiting consumer (if any) look at the buffer again."""
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def finish(self, error: StorageError | None) -> bool:
        """End the stream: the consumer gets what is buffered, then `error` (or the end).
        False if it had already ended (the first ending wins)."""
        if self._done:
            return False
        self._done = True
        self._error = error
        self.wake()
        return True

    @property
    def done(self) -> bool:
        return self._done

    # --------------------------------------------------------------------- consumer side

    async def next_batch(self) -> list[Event]:
        """Every buffered event (waiting for one); [] at a clean end; the error at a failed one."""
        while not self.buffer:
            if self._done:
                if self._error is not None:
                    raise self._error
                return []
            self._waiter = asyncio.get_running_loop().create_future()
            await self._waiter
        batch = list(self.buffer)
        self.buffer.clear()
        self._taken()
        return batch

    def _taken(self) -> None:
        """Called after the consumer emptied the buffer (a hook for flow control)."""

    async def __aiter__(self) -> AsyncIterator[Event]:
        while True:
            batch = await self.next_batch()
            if not batch:
                return
            for event in batch:
                yield event
