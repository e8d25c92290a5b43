"""The work queue's upstream semantics and the shared informer factory's sharing."""

from __future__ import annotations

import asyncio

import pytest

from minikube_py.client import Client
from minikube_py.client.cache import Indexer, InformerFactory
from minikube_py.client.resources import NODES, PODS
from minikube_py.client.workqueue import WorkQueue


async def test_queue_dedups_and_never_hands_a_key_to_two_workers():
    q = WorkQueue()
    q.add("a"); q.add("a"); q.add("b")
    assert len(q) == 2
    key = await q.get()
    assert key == "a"
    q.add("a")                      # re-added while processing: not queued twice
    assert await q.get() == "b"
    assert len(q) == 0
    q.done("a")                     # now it comes back, once
    assert await asyncio.wait_for(q.get(), 1) == "a"


async def test_rate_limited_backoff_doubles_and_forget_resets():
    q = WorkQueue(base_delay=0.01)
    q.add_rate_limited("k"); assert q.num_requeues("k") == 1
    assert await asyncio.wait_for(q.get(), 1) == "k"
    q.done("k")
    q.add_rate_limited("k"); assert q.num_requeues("k") == 2
    q.forget("k"); assert q.num_requeues("k") == 0


async def test_add_after_keeps_the_earliest():
    q = WorkQueue()
    q.add_after("k", 5.0)
    q.add_after("k", 0.01)
    assert await asyncio.wait_for(q.get(), 1) == "k"


def test_add_indexer_indexes_existing_objects_and_refuses_a_different_function():
    ix = Indexer()
    ix.add({"metadata": {"name": "p", "namespace": "d"}, "spec": {"nodeName": "n1"}})
    by_node = lambda o: [o["spec"]["nodeName"]]  # noqa: E731
    ix.add_indexer("node", by_node)
    assert [o["metadata"]["name"] for o in ix.by_index("node", "n1")] == ["p"]
    ix.add_indexer("node", by_node)  # same function: fine
    with pytest.raises(ValueError):
        ix.add_indexer("node", lambda o: [])


def test_factory_shares_one_informer_per_resource_and_selectors():
    factory = InformerFactory(Client.__new__(Client))
    assert factory.informer(PODS) is factory.informer(PODS)
    assert factory.informer(PODS) is not factory.informer(PODS, field_selector="spec.nodeName=a")
    assert factory.informer(NODES) is not factory.informer(PODS)


def test_informers_cache_objects_without_managed_fields_unless_told_otherwise():
    from minikube_py.client.cache import Informer

    pod = {"metadata": {"name": "p", "namespace": "d", "resourceVersion": "1",
                        "managedFields": [{"manager": "kubectl"}]}}
    stripped = Informer(Client.__new__(Client), PODS)
    seen: list[dict] = []
    stripped.add_event_handler(on_add=seen.append)
    stripped.add(dict(pod, metadata=dict(pod["metadata"])))
    assert "managedFields" not in stripped.indexer.get("d/p")["metadata"]
    assert "managedFields" not in seen[0]["metadata"]
    kept = Informer(Client.__new__(Client), PODS, transform=None)
    kept.add(dict(pod, metadata=dict(pod["metadata"])))
    assert kept.indexer.get("d/p")["metadata"]["managedFields"] == [{"manager": "kubectl"}]


def test_filtered_view_turns_selector_boundary_crossings_into_adds_and_deletes():
    """A pod bound to a node leaves the 'unassigned' view (delete) and enters 'assigned'
    (add), exactly as two field-selected watches would report it."""
    from minikube_py.client.cache import FilteredInformer, Informer

    shared = Informer(Client.__new__(Client), PODS)
    unassigned = FilteredInformer(shared, lambda p: not p["spec"].get("nodeName"))
    assigned = FilteredInformer(shared, lambda p: bool(p["spec"].get("nodeName")))
    log: list[tuple[str, str, str]] = []
    for view, name in ((unassigned, "unassigned"), (assigned, "assigned")):
        view.add_event_handler(
            on_add=lambda o, n=name: log.append((n, "add", o["metadata"]["resourceVersion"])),
            on_update=lambda a, b, n=name: log.append((n, "update", b["metadata"]["resourceVersion"])),
            on_delete=lambda o, n=name: log.append((n, "delete", o["metadata"]["resourceVersion"])))

    def pod(rv: str, node: str = "") -> dict:
        return {"metadata": {"name": "p", "namespace": "d", "resourceVersion": rv},
                "spec": {"nodeName": node} if node else {}}
    shared.add(pod("1"))
    shared.update(pod("2"))
    shared.update(pod("3", "n1"))
    shared.update(pod("4", "n1"))
    assert unassigned.indexer.get("d/p") is None and assigned.indexer.get("d/p") is not None
    assert len(assigned.indexer) == 1 and unassigned.indexer.list() == []
    shared.delete(pod("4", "n1"))
    assert log == [("unassigned", "add", "1"), ("unassigned", "update", "2"),
                   ("unassigned", "delete", "2"), ("assigned", "add", "3"),
                   ("assigned", "update", "4"), ("assigned", "delete", "4")]
