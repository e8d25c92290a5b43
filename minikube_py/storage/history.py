"""One key's retained history, through the Store contract only.

Kubernetes piece: etcd's revision history of a key (what `etcdctl watch --rev=N KEY` replays);
Kubernetes itself never reads it, but a learner does: `minikube-py storage history KEY` and
the console's store browser and journey view both show how an object changed write by write.
It asks no backend-specific question, so it works on the embedded store and on a real etcd:
it watches the key from the compaction point and keeps the key's events up to the current
revision.
"""

from __future__ import annotations

import asyncio
from typing import NamedTuple

from .errors import StorageError
from .interface import Store
from .kv import Event, KeyValue

#: How long to wait for more events of a key that is deleted now, after the last one
#: arrived: with no live value there is no revision to wait for (see collect_history).
HISTORY_QUIET_SECONDS = 0.5
#: How long to wait for an event known to be retained.
HISTORY_TIMEOUT_SECONDS = 30.0


class HistoryTimeoutError(StorageError):
    """A retained event of the key did not arrive in time."""


class History(NamedTuple):
    """events: the key's retained events, oldest first; live: its value now (None when it
    does not exist); revision: the store revision read at; start: the first retained
    revision (the compaction point, at least 1)."""

    events: list[Event]
    live: KeyValue | None
    revision: int
    start: int


async def collect_history(store: Store, key: str, *,
                          timeout: float = HISTORY_TIMEOUT_SECONDS,
                          quiet: float = HISTORY_QUIET_SECONDS) -> History:
    """Every retained event of `key` up to now.

    The watch starts at the compaction point and is read until it passes the revision the
    live value was read at. When is that? If the key exists, its last event is the write of
    its live value, so we wait for that event — unless that write is at or before the
    compaction point, where a backend may no longer hold it. If the key does not exist,
    nothing marks its last event; we stop once a batch brings an event at or past the read
    revision, or after `quiet` seconds without events (retained history is delivered at
    once, so quiet means done).
    """
    page = await store.range(key, limit=1)
    live = page.kvs[0] if page.kvs and page.kvs[0].key == key else None
    current = page.revision
    start = max(await store.compact_revision(), 1)
    events: list[Event] = []
    if live is not None and live.mod_revision < start:
        return History(events, live, current, start)
    wait_for = live.mod_revision if live is not None and live.mod_revision > start else None
    watch = await store.watch(key, start_revision=start)
    try:
        while True:
            limit = timeout if wait_for is not None else quiet
            try:
                batch = await asyncio.wait_for(watch.next_batch(), limit)
            except TimeoutError:
                if wait_for is not None:
                    raise HistoryTimeoutError(
                        f"history of {key} did not arrive within {timeout:g}s") from None
                break
            if not batch:
                break
            done = False
            for event in batch:
                if event.revision > current:
                    done = True
                    break
                if event.kv.key == key:
                    events.append(event)
                if event.revision == current or (wait_for is not None and event.revision >= wait_for):
                    done = True
            if done:
                break
    finally:
        await watch.cancel()
    return History(events, live, current, start)
