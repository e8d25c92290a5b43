"""Leases that make events expire after --event-ttl.

Kubernetes piece: pkg/storage/etcd3/lease_manager.go (v1.x): instead of one etcd lease per
event, a lease is reused for every key written within `reuse_seconds`, with its TTL stretched
by that window so no key outlives its TTL by less than the requested amount. v1.0 stored events
in etcd v2 with a per-key TTL; leases are the etcd v3 way of saying the same thing.
"""

from __future__ import annotations

import asyncio
import time
from typing import Callable

from ..storage import Store


class LeaseManager:
    def __init__(
        self,
        store: Store,
        ttl_seconds: int,
        *,
        reuse_seconds: int = 60,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.ttl = max(1, int(ttl_seconds))
        self.reuse = max(0, min(int(reuse_seconds), self.ttl // 10 or 1))
        self.clock = clock
        self._lease_id = 0
        self._expires_reuse_at = 0.0
        self._lock = asyncio.Lock()

    async def lease(self) -> int:
        """A lease id whose keys live at least `ttl_seconds` from now."""
        now = self.clock()
        if self._lease_id and now < self._expires_reuse_at:
            return self._lease_id
        async with self._lock:
            now = self.clock()
            if not self._lease_id or now >= self._expires_reuse_at:
                self._lease_id = await self.store.grant_lease(self.ttl + self.reuse)
                self._expires_reuse_at = now + self.reuse
            return self._lease_id
