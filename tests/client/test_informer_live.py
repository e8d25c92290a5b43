"""The shared informer against a real API server: a delete missed while the watch was down
comes back from the relist as a DeletedFinalStateUnknown; per-handler resync periods run."""

from __future__ import annotations

import asyncio

from minikube_py.client.cache import DeletedFinalStateUnknown, Informer
from minikube_py.client.resources import PODS
from tests.apiserver.conftest import pod
from tests.client.test_client_live import cluster  # noqa: F401  (the fixture)


async def eventually(check, timeout: float = 5.0) -> None:
    for _ in range(int(timeout / 0.02)):
        if check():
            return
        await asyncio.sleep(0.02)
    assert check()


class Recorder:
    def __init__(self) -> None:
        self.log: list[tuple] = []

    def on_add(self, obj, is_in_initial_list):
        self.log.append(("add", obj["metadata"]["name"], is_in_initial_list))

    def on_update(self, old, new):
        self.log.append(("update", new["metadata"]["name"],
                         old["metadata"]["resourceVersion"] == new["metadata"]["resourceVersion"]))

    def on_delete(self, obj):
        self.log.append(("delete", obj))


async def test_delete_while_the_watch_is_down_is_a_tombstone_after_the_relist(
        cluster, monkeypatch):  # noqa: F811
    """The first list sees a and b; before the watch starts, b is deleted and the history
    compacted past the list, so the watch gets 410 and the reflector re-lists: b is gone
    without a DELETED event ever being seen, and the informer reports it as
    DeletedFinalStateUnknown carrying b's last known state."""
    api, client = cluster
    store = api.server.store
    await client.create(PODS, pod("a"), "default")
    await client.create(PODS, pod("b"), "default")
    real_list = client.list
    lists = []

    async def list_then_lose_the_watch(*args, **kwargs):
        result = await real_list(*args, **kwargs)
        lists.append(result["metadata"]["resourceVersion"])
        if len(lists) == 1:
            await client.delete(PODS, "b", "default", grace_period_seconds=0)
            for i in range(6):  # churn past the pods' watch cache, then compact
                await client.create(PODS, pod(f"c{i}"), "default")
            await store.compact(await store.current_revision())
        return result

    monkeypatch.setattr(client, "list", list_then_lose_the_watch)
    informer = Informer(client, PODS)
    handler, funcs = Recorder(), []
    informer.add_event_handler(handler)
    informer.add_event_handler(on_delete=lambda o: funcs.append(o["metadata"]["name"]))
    informer.start()
    try:
        await informer.wait_for_sync(5)
        await eventually(lambda: len(lists) >= 2 and any(e[0] == "delete" for e in handler.log))
        adds = [e for e in handler.log if e[0] == "add"]
        assert adds[:2] == [("add", "a", True), ("add", "b", True)]
        assert sorted(adds[2:]) == [("add", f"c{i}", False) for i in range(6)]
        deletes = [e[1] for e in handler.log if e[0] == "delete"]
        assert len(deletes) == 1 and isinstance(deletes[0], DeletedFinalStateUnknown)
        assert deletes[0].key == "default/b" and deletes[0].obj["metadata"]["name"] == "b"
        assert funcs == ["b"]
        assert int(informer.last_sync_resource_version) >= int(lists[1])
        assert sorted(informer.indexer.keys()) == ["default/a"] + [
            f"default/c{i}" for i in range(6)]
    finally:
        await informer.stop()


async def test_per_handler_resync_periods(cluster):  # noqa: F811
    _, client = cluster
    await client.create(PODS, pod("a"), "default")
    informer = Informer(client, PODS, resync_period=30)
    resyncing, quiet = Recorder(), Recorder()
    informer.add_event_handler(resyncing, resync_period=1)
    informer.add_event_handler(quiet)  # the informer's 30 s
    assert informer.resync_check_period == 1
    informer.start()
    try:
        await informer.wait_for_sync(5)
        await eventually(lambda: ("update", "a", True) in resyncing.log, timeout=4)
        assert quiet.log == [("add", "a", True)]
        await client.patch(PODS, "a", {"metadata": {"labels": {"x": "y"}}}, "default")
        await eventually(lambda: ("update", "a", False) in quiet.log)
    finally:
        await informer.stop()
