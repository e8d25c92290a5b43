"""The console's watches: one shared informer per kind for the whole console, whatever the
number of browser tabs, and a fan-out of Events to the tabs following them.

Kubernetes piece: client-go's SharedInformerFactory (client/cache/factory.py) — the console is
one more client of the API server, so it lists and watches nodes, pods and events once, through
the in-process client, and every view reads the informers' caches. Inside `start` it does not
even do that: it takes its informers from the cluster's own factory (the one the scheduler,
the controllers and the kubelets share), so the console adds no watch and no second copy of
every pod — only an events informer if no component had one. A tab following Events gets
its own bounded queue; a tab that does not keep up is dropped (its stream ends, the browser's
EventSource reconnects and starts from the cache again) instead of growing memory — the same
rule as the API server's watchers.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import structlog

from ..api import errors
from ..client.cache import InformerFactory
from ..client.resources import EVENTS, NODES, PODS
from .shaping import event_row

if TYPE_CHECKING:
    from ..client import Client

log = structlog.get_logger(component="console")

Obj = dict[str, Any]
#: events one follower may have waiting before it is dropped
QUEUE_SIZE = 1000
#: how long the first view waits for the informers' initial lists
SYNC_TIMEOUT = 30.0


class EventFollower:
    """One tab's stream of Event rows; `closed` once it fell behind."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[Obj] = asyncio.Queue(QUEUE_SIZE)
        self.closed = False

    def push(self, row: Obj) -> None:
        try:
            self.queue.put_nowait(row)
        except asyncio.QueueFull:
            self.closed = True


class Feeds:
    """Nodes, pods and events, listed and watched once; started by the first view. `shared`:
    the cluster's running factory to take the informers from (not stopped by `close`); without
    one the console makes and owns its own, over `client`."""

    def __init__(self, client: Client, shared: InformerFactory | None = None) -> None:
        self.client = client
        self.owned = shared is None
        self.factory = shared if shared is not None else InformerFactory(client)
        self.nodes = self.factory.informer(NODES)
        self.pods = self.factory.informer(PODS)
        self.events = self.factory.informer(EVENTS)
        self.followers: set[EventFollower] = set()
        self._listener: object = None
        self._started: asyncio.Future | None = None

    async def ready(self) -> None:
        """Start the informers (once) and wait until their caches hold the first lists."""
        if self._started is None:
            if self._listener is None:
                self._listener = self.events.add_event_handler(
                    self._event, lambda _old, new: self._event(new))
            informers = (self.nodes, self.pods, self.events)
            for informer in informers:
                informer.start()  # (a no-op for one the shared factory runs already)
            self._started = asyncio.ensure_future(asyncio.gather(
                *(i.wait_for_sync(SYNC_TIMEOUT) for i in informers)))
        started = self._started
        try:
            await asyncio.shield(started)
        except TimeoutError:
            if self._started is started:
                self._started = None  # the next view waits again
            raise errors.service_unavailable(
                f"the console's watches of nodes, pods and events have not listed within "
                f"{SYNC_TIMEOUT:g} s") from None

    def _event(self, event: Obj) -> None:
        if not self.followers:
            return
        row = event_row(event)
        for follower in list(self.followers):
            follower.push(row)
            if follower.closed:
                self.followers.discard(follower)
                log.info("dropped a slow event follower", queued=QUEUE_SIZE)

    def follow(self) -> EventFollower:
        follower = EventFollower()
        self.followers.add(follower)
        return follower

    def unfollow(self, follower: EventFollower) -> None:
        self.followers.discard(follower)

    def node_list(self) -> list[Obj]:
        return self.nodes.indexer.list()

    def pod_list(self) -> list[Obj]:
        return self.pods.indexer.list()

    def event_list(self) -> list[Obj]:
        return self.events.indexer.list()

    async def close(self) -> None:
        if self._started is not None:
            self._started.cancel()
        if self.owned:
            await self.factory.stop()
        elif self._listener is not None:
            self.events.remove_event_handler(self._listener)  # type: ignore[arg-type]
        await self.client.close()
