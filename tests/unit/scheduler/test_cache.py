"""Scheduler cache: assume before bind, confirm through the informer, forget, expire."""

from __future__ import annotations

import pytest

from minikube_py.scheduler.cache import SchedulerCache


def node(name: str) -> dict:
    return {"metadata": {"name": name},
            "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "10"}}}


def pod(name: str, cpu: str = "500m", node_name: str = "", port: int = 0) -> dict:
    container = {"name": "c", "resources": {"requests": {"cpu": cpu}}}
    if port:
        container["ports"] = [{"containerPort": 80, "hostPort": port}]
    return {"metadata": {"name": name, "namespace": "default"},
            "spec": {"nodeName": node_name, "containers": [container]}}


def test_assumed_pod_counts_at_once_and_is_confirmed_by_the_informer():
    now = [0.0]
    cache = SchedulerCache(ttl=30, clock=lambda: now[0])
    cache.add_node(node("n1"))
    cache.assume_pod(pod("p", port=8080), "n1")
    info = cache.nodes["n1"]
    assert info.requested.milli_cpu == 500 and info.used_ports == {8080: 1}
    cache.finish_binding(pod("p"))
    cache.add_pod(pod("p", node_name="n1", port=8080))  # the watch confirms the binding
    assert not cache.is_assumed(pod("p"))
    now[0] = 100
    assert cache.cleanup_expired() == []
    assert info.requested.milli_cpu == 500  # counted once, not twice


def test_forget_undoes_and_expiry_drops_unconfirmed_assumptions():
    now = [0.0]
    cache = SchedulerCache(ttl=30, clock=lambda: now[0])
    cache.add_node(node("n1"))
    cache.assume_pod(pod("a"), "n1")
    cache.forget_pod(pod("a"))  # binding failed
    assert cache.nodes["n1"].requested.milli_cpu == 0
    cache.assume_pod(pod("b"), "n1")
    cache.finish_binding(pod("b"))
    now[0] = 29
    assert cache.cleanup_expired() == []
    now[0] = 31
    assert [p["metadata"]["name"] for p in cache.cleanup_expired()] == ["b"]
    assert cache.nodes["n1"].requested.milli_cpu == 0
    cache.assume_pod(pod("c"), "n1")
    with pytest.raises(ValueError):
        cache.assume_pod(pod("c"), "n1")  # one assumption per pod


def test_pods_move_and_finished_pods_release_their_node():
    cache = SchedulerCache()
    cache.add_node(node("n1"))
    cache.add_node(node("n2"))
    cache.add_pod(pod("p", node_name="n1"))
    cache.add_pod(pod("p", node_name="n2"))
    assert cache.nodes["n1"].requested.milli_cpu == 0 and cache.nodes["n2"].requested.milli_cpu == 500
    done = pod("p", node_name="n2")
    done["status"] = {"phase": "Succeeded"}
    cache.update_pod(pod("p", node_name="n2"), done)
    assert cache.nodes["n2"].requested.milli_cpu == 0
    cache.remove_node(node("n1"))
    assert [i.name for i in cache.node_infos()] == ["n2"]


def test_snapshot_rereads_only_what_changed_and_renumbers_after_a_removal():
    cache = SchedulerCache()
    for name in ("n1", "n2", "n3"):
        cache.add_node(node(name))
    table = cache.snapshot()
    assert table.names == ["n1", "n2", "n3"] and list(table.requested_cpu) == [0, 0, 0]
    cache.assume_pod(pod("a"), "n2")
    assert cache.snapshot() is table  # same table, row refilled in place
    assert list(table.requested_cpu) == [0, 500, 0] and list(table.pod_count) == [0, 1, 0]
    cache.add_node(node("n4"))
    assert cache.snapshot().names == ["n1", "n2", "n3", "n4"]
    cache.remove_node(node("n1"))
    after = cache.snapshot()
    assert after.names == ["n2", "n3", "n4"] and list(after.requested_cpu) == [500, 0, 0]
    assert after.row_of == {"n2": 0, "n3": 1, "n4": 2}
