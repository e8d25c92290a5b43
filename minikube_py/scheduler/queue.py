"""The scheduling queue: a FIFO of pods to schedule, with per-pod backoff for failures.

Kubernetes v1.0 piece: plugin/pkg/scheduler/factory's PodQueue (a cache.FIFO fed by the
unscheduled-pods reflector) and podBackoff (1 s doubling to 60 s per pod, garbage-collected);
plus the v1.1x refinement that an unschedulable pod is retried when the cluster changes (a
node added or updated, a pod deleted) instead of only when its timer fires. A pod is never
retried before its backoff expires, so a pod nothing can fit costs one attempt per backoff
period, not a hot loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..client.cache import FIFO, meta_namespace_key
from ..pausing import PauseGate

Obj = dict[str, Any]
INITIAL_BACKOFF = 1.0
MAX_BACKOFF = 60.0


@dataclass
class _Entry:
    delay: float
    until: float


class PodBackoff:
    """Per-pod backoff durations (pure: the clock is injected)."""

    def __init__(self, clock: Callable[[], float], initial: float = INITIAL_BACKOFF,
                 maximum: float = MAX_BACKOFF) -> None:
        self.clock = clock
        self.initial = initial
        self.maximum = maximum
        self.entries: dict[str, _Entry] = {}

    def bump(self, key: str) -> float:
        """Record a failure; returns how long the pod must wait (1 s, 2 s, 4 s, ... 60 s)."""
        entry = self.entries.get(key)
        delay = self.initial if entry is None else min(entry.delay * 2, self.maximum)
        self.entries[key] = _Entry(delay, self.clock() + delay)
        return delay

    def remaining(self, key: str) -> float:
        entry = self.entries.get(key)
        return 0.0 if entry is None else max(0.0, entry.until - self.clock())

    def forget(self, key: str) -> None:
        self.entries.pop(key, None)

    def gc(self) -> int:
        """Drop entries idle for twice the maximum; returns how many (upstream podBackoff.gc
        drops those not updated for maxDuration; counting from the end of the wait, with a
        margin, keeps a pod that is retried late from losing its doubled backoff)."""
        now = self.clock()
        stale = [k for k, e in self.entries.items() if now - e.until > 2 * self.maximum]
        for key in stale:
            del self.entries[key]
        return len(stale)


class SchedulingQueue:
    def __init__(self, *, initial_backoff: float = INITIAL_BACKOFF,
                 max_backoff: float = MAX_BACKOFF) -> None:
        loop = asyncio.get_running_loop()
        self.loop = loop
        self.active = FIFO()
        self.unschedulable: dict[str, Obj] = {}
        self.backoff = PodBackoff(loop.time, initial_backoff, max_backoff)
        self._timers: dict[str, asyncio.TimerHandle] = {}

    def __len__(self) -> int:
        return len(self.active) + len(self.unschedulable)

    def add(self, pod: Obj) -> None:
        key = meta_namespace_key(pod)
        if key in self.unschedulable:
            self.unschedulable[key] = pod  # keep waiting out its backoff, with the new version
        else:
            self.active.add(pod)

    def update(self, pod: Obj) -> None:
        """A changed pod may fit now: it is retried once its backoff allows."""
        key = meta_namespace_key(pod)
        if key in self.unschedulable:
            self.unschedulable[key] = pod
            self._retry_after_backoff(key)
        elif key in self.active:
            self.active.update(pod)
        else:
            self.active.add(pod)

    def delete(self, pod: Obj) -> None:
        key = meta_namespace_key(pod)
        self.active.delete(pod)
        self.unschedulable.pop(key, None)
        self.backoff.forget(key)
        timer = self._timers.pop(key, None)
        if timer is not None:
            timer.cancel()

    def add_unschedulable(self, pod: Obj) -> float:
        """A failed attempt: wait out the (doubled) backoff, then retry. Returns the delay."""
        key = meta_namespace_key(pod)
        delay = self.backoff.bump(key)
        self.unschedulable[key] = pod
        self._retry_after_backoff(key)
        return delay

    def scheduled(self, pod: Obj) -> None:
        """The pod was bound: forget its backoff."""
        self.backoff.forget(meta_namespace_key(pod))

    def move_all_to_active(self) -> None:
        """The cluster changed (a node came or changed, a pod left): every unschedulable pod
        is retried — each as soon as its own backoff allows."""
        for key in list(self.unschedulable):
            self._retry_after_backoff(key)

    def _retry_after_backoff(self, key: str) -> None:
        if key in self._timers:
            return  # already due at its backoff expiry
        wait = self.backoff.remaining(key)
        self._timers[key] = self.loop.call_later(wait, self._activate, key)

    def _activate(self, key: str) -> None:
        self._timers.pop(key, None)
        pod = self.unschedulable.pop(key, None)
        if pod is not None:
            self.active.add(pod)

    async def pop(self, gate: PauseGate | None = None) -> Obj:
        """The next pod; none while `gate` is paused (the queue keeps filling)."""
        return await self.active.pop(gate)

    def close(self) -> None:
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
