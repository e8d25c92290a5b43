"""Watch events of a CRD version converted by a webhook (or pruned to the version's schema),
once for every watcher of that version.

Kubernetes piece: upstream gives every served version of a CRD its own storage and watch cache,
whose decoder converts each etcd event into that version (through the conversion webhook) once,
for all the version's watchers. Here all versions share one fan-out (registry/cacher.py) keyed
by the stored objects, so the sharing is done by a `ConversionFeed` per (converter, version):
watchers ask it for an event's object, the first request queues the object, and one task sends
everything queued in ONE ConversionReview (a store batch of events becomes one call); the
answer resolves a future per (event, feed) that every watcher of the version awaits, in its own
order, off the fan-out's synchronous path. A failed conversion fails the futures of its batch;
each watcher then ends with an ERROR event carrying the failure.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import TYPE_CHECKING

from .. import offload
from ..api import errors
from .strategy import Obj

if TYPE_CHECKING:
    from ..apiextensions.conversion import Converter

_feeds: weakref.WeakKeyDictionary[Converter, dict[str, ConversionFeed]] = \
    weakref.WeakKeyDictionary()


def feed_for(converter: Converter, api_version: str) -> ConversionFeed:
    """The feed of one CRD version (it lives as long as the CRD's converter is served)."""
    feeds = _feeds.setdefault(converter, {})
    feed = feeds.get(api_version)
    if feed is None:
        feed = feeds[api_version] = ConversionFeed(converter, api_version)
    return feed


class ConversionFeed:
    """Batches objects to convert into one review at a time; answers each with a future."""

    def __init__(self, converter: Converter, api_version: str) -> None:
        self.converter = converter
        self.api_version = api_version
        self._queue: list[tuple[Obj, asyncio.Future[Obj]]] = []
        self._weight = 0  # stored bytes of what is queued
        self._task: asyncio.Task | None = None

    def request(self, memo: dict, which: str, obj: Obj, size: int) -> asyncio.Future[Obj]:
        """The converted `obj` (an event's current or previous object, `size` stored bytes),
        shared through the event's `memo` with every other watcher of this version."""
        key = (self, which)
        future = memo.get(key)
        if future is None:
            loop = asyncio.get_running_loop()
            future = memo[key] = loop.create_future()
            self._queue.append((obj, future))
            self._weight += size
            if self._task is None:
                self._task = loop.create_task(self._run(), name="watch-conversion")
        return future

    async def _run(self) -> None:
        try:
            while self._queue:
                batch, self._queue = self._queue, []
                offload.weigh(self._weight)  # a big batch is checked and pruned on the worker
                self._weight = 0
                try:
                    converted = await self.converter.convert([obj for obj, _ in batch],
                                                             self.api_version)
                except errors.StatusError as exc:
                    for _, future in batch:
                        if not future.done():
                            future.set_exception(exc)
                            future.exception()  # retrieved: a closed watcher may never await it
                    continue
                for (_, future), obj in zip(batch, converted):
                    if not future.done():
                        future.set_result(obj)
        finally:
            self._task = None
