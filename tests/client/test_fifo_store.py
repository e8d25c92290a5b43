"""FIFO and Indexer semantics (pure, table-like)."""

from __future__ import annotations

import asyncio

from minikube_py.client.cache import FIFO, Indexer, meta_namespace_key


def pod(name: str, rv: str = "1", node: str = "", ns: str = "default") -> dict:
    return {"metadata": {"name": name, "namespace": ns, "resourceVersion": rv},
            "spec": {"nodeName": node}}


def test_keys_are_namespace_slash_name_or_name():
    assert meta_namespace_key(pod("a")) == "default/a"
    assert meta_namespace_key({"metadata": {"name": "node-1"}}) == "node-1"


async def test_fifo_keeps_place_and_newest_version():
    q = FIFO()
    q.add(pod("a", "1"))
    q.add(pod("b", "1"))
    q.add(pod("a", "2"))  # replaces, does not move
    assert len(q) == 2
    assert (await q.pop())["metadata"]["resourceVersion"] == "2"
    assert (await q.pop())["metadata"]["name"] == "b"
    assert q.pop_nowait() is None


async def test_fifo_delete_skips_and_pop_waits():
    q = FIFO()
    q.add(pod("a"))
    q.delete(pod("a"))
    waiter = asyncio.create_task(q.pop())
    await asyncio.sleep(0.01)
    assert not waiter.done()
    q.add_if_not_present(pod("c"))
    q.add_if_not_present(pod("c", "9"))  # already queued: ignored
    got = await asyncio.wait_for(waiter, 1)
    assert got["metadata"] == {"name": "c", "namespace": "default", "resourceVersion": "1"}


def test_indexer_maintains_indexes_across_updates_and_deletes():
    idx = Indexer({"node": lambda o: [o["spec"]["nodeName"]] if o["spec"]["nodeName"] else []})
    idx.add(pod("a", node="n1"))
    idx.add(pod("b", node="n1"))
    idx.update(pod("a", "2", node="n2"))
    assert [o["metadata"]["name"] for o in idx.by_index("node", "n1")] == ["b"]
    assert idx.by_index("node", "n2")[0]["metadata"]["resourceVersion"] == "2"
    idx.delete(pod("b"))
    assert idx.by_index("node", "n1") == [] and "n1" not in idx.indices["node"]
    idx.replace([pod("z", node="n3")])
    assert idx.keys() == ["default/z"] and idx.by_index("node", "n2") == []
