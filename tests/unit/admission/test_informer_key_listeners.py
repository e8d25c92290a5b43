"""StoreInformer's per-key listeners over a real EmbeddedStore: the initial list, each watch
event, and a re-list reporting the keys that vanished meanwhile (what the Node authorizer's
graph is kept by)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import orjson

from minikube_py.apiserver.admission.informer import StoreInformer
from minikube_py.storage import EmbeddedStore

PREFIX = "/registry/pods/"


def value(name: str, node: str) -> bytes:
    return orjson.dumps({"metadata": {"name": name, "namespace": "ns"},
                         "spec": {"nodeName": node}})


async def test_key_listeners_see_list_events_and_relist_deletions(tmp_path: Path) -> None:
    store = await EmbeddedStore.open(tmp_path / "data", fsync=False)
    seen: list[tuple[str, str | None]] = []
    try:
        await store.create(f"{PREFIX}ns/a", value("a", "n1"))
        await store.create(f"{PREFIX}ns/b", value("b", "n1"))
        await store.create("/registry/secrets/ns/s", b'{"metadata":{"name":"s"}}')
        informer = StoreInformer(store, PREFIX, "test")
        informer.key_listeners.append(
            lambda key, obj: seen.append((key, obj and obj["spec"]["nodeName"])))
        await informer.start()
        assert sorted(seen) == [(f"{PREFIX}ns/a", "n1"), (f"{PREFIX}ns/b", "n1")]
        seen.clear()
        current = await store.get(f"{PREFIX}ns/a")
        await store.update(f"{PREFIX}ns/a", value("a", "n2"),
                           expected_mod_revision=current.mod_revision)
        await store.delete(f"{PREFIX}ns/b")
        for _ in range(200):
            if len(seen) == 2:
                break
            await asyncio.sleep(0.01)
        assert seen == [(f"{PREFIX}ns/a", "n2"), (f"{PREFIX}ns/b", None)]
        # stopped, a key vanishes; the next start re-lists and reports it gone
        await informer.stop()
        await store.create(f"{PREFIX}ns/c", value("c", "n3"))
        await store.delete(f"{PREFIX}ns/a")
        seen.clear()
        await informer.start()
        assert sorted(seen, key=str) == [(f"{PREFIX}ns/a", None), (f"{PREFIX}ns/c", "n3")]
        await informer.stop()
    finally:
        await store.close()
