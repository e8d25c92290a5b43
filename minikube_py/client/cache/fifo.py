"""A FIFO of objects keyed by namespace/name: the scheduler's pod queue.

Kubernetes v1.0 piece: pkg/client/cache/fifo.go. Adding an object whose key is already queued
replaces the queued object without moving it (the consumer always gets the newest version, and
an object is never processed twice for one place in line); deleting drops it; `pop` waits.
"""

from __future__ import annotations

import asyncio
import collections
from typing import TYPE_CHECKING, Any

from .store import meta_namespace_key

if TYPE_CHECKING:
    from ...pausing import PauseGate

Obj = dict[str, Any]


class FIFO:
    def __init__(self) -> None:
        self.items: dict[str, Obj] = {}
        self.queue: collections.deque[str] = collections.deque()
        self._ready = asyncio.Event()

    def __len__(self) -> int:
        return len(self.items)

    def __contains__(self, key: str) -> bool:
        return key in self.items

    def add(self, obj: Obj) -> None:
        key = meta_namespace_key(obj)
        if key not in self.items:
            self.queue.append(key)
        self.items[key] = obj
        self._ready.set()

    update = add

    def add_if_not_present(self, obj: Obj) -> None:
        """Requeue `obj` only if no newer version is waiting (upstream AddIfNotPresent)."""
        if meta_namespace_key(obj) not in self.items:
            self.add(obj)

    def delete(self, obj: Obj) -> None:
        self.items.pop(meta_namespace_key(obj), None)  # its key is skipped when popped

    def get(self, key: str) -> Obj | None:
        return self.items.get(key)

    async def pop(self, gate: PauseGate | None = None) -> Obj:
        """The oldest queued object, waiting for one if the queue is empty. `gate`: while it
        is paused nothing is taken (the queue keeps filling; minikube_py/pausing.py)."""
        while True:
            if gate is not None and gate.paused:
                await gate.wait_resumed()
                continue
            while self.queue:
                key = self.queue.popleft()
                obj = self.items.pop(key, None)
                if obj is not None:
                    return obj
            self._ready.clear()
            await self._ready.wait()

    def pop_nowait(self) -> Obj | None:
        while self.queue:
            obj = self.items.pop(self.queue.popleft(), None)
            if obj is not None:
                return obj
        return None
