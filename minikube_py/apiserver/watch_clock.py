"""One clock for every open watch stream.

Kubernetes piece: none by name — upstream's watch server (k8s.io/apiserver endpoints/handlers
watch.go) gives each stream a Go timer; here one task wakes every due writer, for the reason
below. Kept apart from watch.py so the request-serving context (serving.py) can hold it
without importing the watch handler.
"""

from __future__ import annotations

import asyncio

from ..registry.cacher import Watcher


class WatchClock:
    """Wakes idle watch writers when they are due (deadline, bookmark, liveness check).

    One task for all watchers, ticking every `resolution` seconds, instead of a timer per
    watcher per wake-up: with thousands of watchers and frequent events, creating and
    cancelling those timers cost more than the writes themselves."""

    def __init__(self, resolution: float = 0.25) -> None:
        self.resolution = resolution
        self.watchers: set[Watcher] = set()
        self._task: asyncio.Task | None = None

    def add(self, watcher: Watcher) -> None:
        self.watchers.add(watcher)
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="watch-clock")

    def discard(self, watcher: Watcher) -> None:
        self.watchers.discard(watcher)

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(self.resolution)
            now = loop.time()
            for watcher in tuple(self.watchers):
                if watcher.due <= now:
                    watcher.due = float("inf")
                    watcher.wake.set()

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None
