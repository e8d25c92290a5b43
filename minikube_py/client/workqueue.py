"""A queue of keys to reconcile: deduplicated, one worker per key at a time, delayed and
rate-limited re-adds.

Kubernetes piece: client-go util/workqueue (Type, DelayingQueue, RateLimitingQueue with the
per-item exponential failure limiter: 5 ms doubling to 1000 s). v1.0's controllers used a
FIFO of objects; the key queue is what every later controller uses, and it is what makes
"sync this RC" idempotent: however many events arrive, the key is synced once with the
latest state.

Semantics as upstream: a key added while queued is dropped (dedup); a key added while being
processed is queued again after `done`, never handed to two workers at once.
"""

from __future__ import annotations

import asyncio
import collections
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..pausing import PauseGate


class WorkQueue:
    def __init__(self, *, base_delay: float = 0.005, max_delay: float = 1000.0) -> None:
        self._queue: collections.deque[str] = collections.deque()
        self._dirty: set[str] = set()
        self._processing: set[str] = set()
        self._failures: dict[str, int] = {}
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._ready = asyncio.Event()
        self._shutdown = False
        self.base_delay = base_delay
        self.max_delay = max_delay

    def __len__(self) -> int:
        return len(self._queue)

    def add(self, key: str) -> None:
        if self._shutdown or key in self._dirty:
            return
        self._dirty.add(key)
        if key not in self._processing:
            self._queue.append(key)
            self._ready.set()

    def add_after(self, key: str, delay: float) -> None:
        """Add `key` after `delay` seconds; an earlier pending re-add wins."""
        if self._shutdown:
            return
        if delay <= 0:
            self.add(key)
            return
        loop = asyncio.get_running_loop()
        due = loop.time() + delay
        timer = self._timers.get(key)
        if timer is not None:
            if timer.when() <= due:
                return
            timer.cancel()
        self._timers[key] = loop.call_at(due, self._fire, key)

    def _fire(self, key: str) -> None:
        self._timers.pop(key, None)
        self.add(key)

    def add_rate_limited(self, key: str) -> None:
        """Re-add after this key's failure backoff (base * 2^failures, capped)."""
        failures = self._failures.get(key, 0)
        self._failures[key] = failures + 1
        self.add_after(key, min(self.base_delay * (2 ** failures), self.max_delay))

    def forget(self, key: str) -> None:
        """The key synced: its failure backoff starts over."""
        self._failures.pop(key, None)

    def num_requeues(self, key: str) -> int:
        return self._failures.get(key, 0)

    async def get(self, gate: PauseGate | None = None) -> str:
        """The next key to process; call `done(key)` when finished with it. `gate`: while it
        is paused no key is taken (keys keep queueing; minikube_py/pausing.py)."""
        while True:
            if gate is not None and gate.paused:
                await gate.wait_resumed()
                continue
            if self._queue:
                break
            self._ready.clear()
            await self._ready.wait()
        key = self._queue.popleft()
        self._processing.add(key)
        self._dirty.discard(key)
        return key

    def done(self, key: str) -> None:
        self._processing.discard(key)
        if key in self._dirty:
            self._queue.append(key)
            self._ready.set()

    def shutdown(self) -> None:
        self._shutdown = True
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
