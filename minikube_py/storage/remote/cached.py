"""An API server process's copy of the store, kept by one watch; consistent reads served from it.

Kubernetes piece: k8s.io/apiserver/pkg/storage/cacher (the Cacher is a storage.Interface in
front of etcd3's) with 1.31's ConsistentListFromCache: a read with no resourceVersion asks for
the store's current revision, waits until the cache has applied it (`waitUntilFreshAndBlock`,
at most 3 s), and is then answered from memory; past the timeout, or for what the cache does not
serve, the read goes to the store. As upstream, paged reads (limit, continue) and reads at an
exact past revision are delegated to the store.

Here the current revision comes from the store process's RevisionBoard (shared memory, no
round trip), so a GET or an unpaged LIST on an extra API server process costs no call to the
store process at all once the cache is fresh — the point of running several. Writes, watches,
leases and compaction go to the store unchanged.
"""

from __future__ import annotations

import asyncio
from typing import Any

import structlog
from sortedcontainers import SortedDict

from ..errors import KeyNotFoundError, StorageError, UnavailableError
from ..interface import Store
from ..kv import EventType, KeyValue, RangeResult, prefix_end
from .revision_board import RevisionBoard

log = structlog.get_logger(component="storage")

#: upstream's blockTimeout for a consistent read from the watch cache
FRESH_TIMEOUT = 3.0


class CachingStore:
    """`store` (a RemoteStore) with every key mirrored in memory for consistent reads."""

    def __init__(self, store: Store, board: RevisionBoard, *,
                 fresh_timeout: float = FRESH_TIMEOUT) -> None:
        self._store = store
        self.board = board
        self.fresh_timeout = fresh_timeout
        self.kvs: SortedDict = SortedDict()
        self.revision = 0
        self.synced = False
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []
        self._task: asyncio.Task | None = None
        self._closed = False
        #: reads answered from memory and reads that went to the store (tests, metrics)
        self.served = {"cache": 0, "store": 0}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    async def start(self) -> None:
        watch = await self._sync()
        self._task = asyncio.create_task(self._follow(watch), name="store-cache")

    async def _sync(self):
        """List everything, then watch from the next revision (a reflector's ListAndWatch)."""
        page = await self._store.range("")
        self.kvs = SortedDict((kv.key, kv) for kv in page.kvs)
        self.revision = page.revision
        watch = await self._store.watch("", start_revision=page.revision + 1)
        self.synced = True
        self._wake()
        return watch

    async def _follow(self, watch) -> None:
        while True:
            try:
                batch = await watch.next_batch()
                if not batch:
                    raise StorageError("watch ended")
            except asyncio.CancelledError:
                await watch.cancel()
                raise
            except StorageError as exc:
                self.synced = False  # reads go to the store until the copy is rebuilt
                log.warning("store cache watch ended; relisting", error=str(exc))
                watch = await self._resync()
                continue
            kvs = self.kvs
            for event in batch:
                if event.type is EventType.PUT:
                    kvs[event.kv.key] = event.kv
                else:
                    kvs.pop(event.kv.key, None)
            self.revision = batch[-1].kv.mod_revision
            self._wake()

    async def _resync(self):
        delay = 0.05
        while True:
            try:
                return await self._sync()
            except StorageError as exc:
                log.warning("store cache relist failed", error=str(exc))
                await asyncio.sleep(delay)
                delay = min(delay * 2, 2.0)

    def _wake(self) -> None:
        if not self._waiters:
            return
        still = []
        for revision, future in self._waiters:
            if self.synced and revision <= self.revision:
                if not future.done():
                    future.set_result(None)
            else:
                still.append((revision, future))
        self._waiters = still

    async def _fresh(self) -> bool:
        """Whether the copy has every write acknowledged before now (waiting for it up to
        `fresh_timeout`); False: read from the store instead."""
        if self._closed:
            raise UnavailableError("store is closed")
        needed = self.board.read()
        if self.synced and self.revision >= needed:
            return True
        future = asyncio.get_running_loop().create_future()
        self._waiters.append((needed, future))
        try:
            await asyncio.wait_for(future, self.fresh_timeout)
        except TimeoutError:
            log.warning("store cache not fresh in time; reading from the store",
                        needed=needed, have=self.revision)
            return False
        return True

    # ---------------------------------------------------------------- reads

    async def get(self, key: str, *, revision: int = 0) -> KeyValue:
        if revision == 0 and await self._fresh():
            self.served["cache"] += 1
            kv = self.kvs.get(key)
            if kv is None:
                raise KeyNotFoundError(key)
            return kv
        self.served["store"] += 1
        return await self._store.get(key, revision=revision)

    async def range(self, prefix: str, *, limit: int = 0, continue_token: str | None = None,
                    revision: int = 0) -> RangeResult:
        if limit == 0 and continue_token is None and revision == 0 and await self._fresh():
            self.served["cache"] += 1
            end = prefix_end(prefix) or None
            kvs = self.kvs
            found = [kvs[k] for k in kvs.irange(prefix or None, end, inclusive=(True, False))]
            return RangeResult(found, self.revision, False, None, 0)
        self.served["store"] += 1
        return await self._store.range(prefix, limit=limit, continue_token=continue_token,
                                       revision=revision)

    async def close(self) -> None:
        self._closed = True
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        for _revision, future in self._waiters:
            if not future.done():
                future.cancel()
        await self._store.close()
