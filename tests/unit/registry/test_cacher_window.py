"""The watch cache's age bound (registry/cacher.py): events older than the events history
window leave the ring down to its lower bound, also while no writes arrive, and a watcher
resuming from before the ring is still served every event, in order, from the store.

Upstream: apiserver/pkg/storage/cacher's watchCache (eventFreshDuration 75 s,
DefaultLowerBoundCapacity 100) and kube-apiserver's EventsHistoryWindow =
max(75 s, --request-timeout + 15 s)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import orjson

from minikube_py.registry import codec, resources
from minikube_py.registry.cacher import Cacher, Watcher, events_history_window
from minikube_py.storage import EmbeddedStore

PREFIX = "/registry/pods/"
PODS = next(s for s in resources.STORED if s.resource == "pods" and s.group == "")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def write(store: EmbeddedStore, i: int) -> int:
    obj = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": f"p{i}", "namespace": "default"}}
    kv = await store.create(f"{PREFIX}default/p{i}", codec.encode(obj))
    return kv.mod_revision


async def settled(cacher: Cacher, revision: int) -> None:
    async with asyncio.timeout(5):
        while cacher.position < revision:
            await asyncio.sleep(0.01)


def test_window_follows_request_timeout_like_kube_apiserver() -> None:
    assert events_history_window(60.0) == 75.0
    assert events_history_window(120.0) == 135.0


async def test_old_events_leave_the_ring_down_to_its_lower_bound(tmp_path: Path) -> None:
    store = await EmbeddedStore.open(tmp_path / "data", compaction_interval=0)
    clock = Clock()
    cacher = Cacher(PODS, store, PREFIX, window=1000, fresh=75.0, min_events=100, clock=clock)
    await cacher.start()
    try:
        first = await store.current_revision()
        for i in range(300):
            last = await write(store, i)
        await settled(cacher, last)
        assert len(cacher.ring) == 300 and cacher.oldest == first
        clock.now += 74.0
        assert cacher.expire() == 0, "nothing is older than the window yet"
        clock.now += 2.0
        for i in range(300, 350):  # fresh events: these stay
            last = await write(store, i)
        await settled(cacher, last)
        assert cacher.expire() == 250
        assert len(cacher.ring) == 100
        assert [e.name for e in cacher.ring][:3] == ["p250", "p251", "p252"]
        assert cacher.oldest == cacher.ring[0].revision - 1
        clock.now += 1000.0
        assert cacher.expire() == 0, "never below the lower bound"

        # a watcher resuming from before the ring: served by the store, every event in order
        watcher = Watcher(namespace=None, labels=None, fields=None)
        cacher.register(watcher, first)
        async with asyncio.timeout(5):
            while watcher.behind or len(watcher.buffer) < 350:
                await asyncio.sleep(0.01)
        names = [orjson.loads(line)["object"]["metadata"]["name"]
                 for chunk in watcher.buffer for line in chunk.splitlines()]
        assert names == [f"p{i}" for i in range(350)]
        cacher.unregister(watcher)
    finally:
        await cacher.stop()
        await store.close()


async def test_the_ring_shrinks_while_no_writes_arrive(tmp_path: Path) -> None:
    store = await EmbeddedStore.open(tmp_path / "data", compaction_interval=0)
    clock = Clock()  # ages on this clock; the timer checks every fresh / 4 real seconds
    cacher = Cacher(PODS, store, PREFIX, window=1000, fresh=0.4, min_events=10, clock=clock)
    await cacher.start()
    try:
        for i in range(200):
            last = await write(store, i)
        await settled(cacher, last)
        assert len(cacher.ring) == 200
        await asyncio.sleep(0.3)
        assert len(cacher.ring) == 200, "the timer ran, but nothing is older than the window"
        clock.now += 1.0
        async with asyncio.timeout(5):  # the timer, with no write since
            while len(cacher.ring) > 10:
                await asyncio.sleep(0.05)
        assert [e.name for e in cacher.ring] == [f"p{i}" for i in range(190, 200)]
    finally:
        await cacher.stop()
        await store.close()
