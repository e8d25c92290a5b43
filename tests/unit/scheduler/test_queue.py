"""Scheduling queue: FIFO order, backoff doubling to a cap, retry after backoff."""

from __future__ import annotations

import asyncio

from minikube_py.scheduler.queue import PodBackoff, SchedulingQueue


def pod(name: str, rv: str = "1") -> dict:
    return {"metadata": {"name": name, "namespace": "default", "resourceVersion": rv}}


def test_backoff_doubles_to_the_cap_and_gc_forgets():
    now = [100.0]
    backoff = PodBackoff(lambda: now[0], initial=1, maximum=60)
    delays = [backoff.bump("default/p") for _ in range(8)]
    assert delays == [1, 2, 4, 8, 16, 32, 60, 60]
    assert backoff.remaining("default/p") == 60
    now[0] += 200
    backoff.gc()
    assert backoff.remaining("default/p") == 0 and not backoff.entries


async def test_unschedulable_pod_returns_after_its_backoff_and_not_before():
    q = SchedulingQueue(initial_backoff=0.05, max_backoff=0.2)
    q.add(pod("a"))
    assert (await q.pop())["metadata"]["name"] == "a"
    assert q.add_unschedulable(pod("a")) == 0.05
    q.move_all_to_active()  # a cluster change does not skip the backoff
    assert q.active.pop_nowait() is None
    got = await asyncio.wait_for(q.pop(), 1)
    assert got["metadata"]["name"] == "a"
    assert q.add_unschedulable(got) == 0.1  # doubled
    q.update(pod("a", "2"))  # the pod changed: still retried only after the backoff
    got = await asyncio.wait_for(q.pop(), 1)
    assert got["metadata"]["resourceVersion"] == "2"
    q.close()


async def test_deleted_pods_leave_the_queue_and_fifo_order_holds():
    q = SchedulingQueue(initial_backoff=0.05)
    for name in ("a", "b", "c"):
        q.add(pod(name))
    q.delete(pod("b"))
    q.add_unschedulable(pod("z"))
    q.delete(pod("z"))
    assert [(await q.pop())["metadata"]["name"] for _ in range(2)] == ["a", "c"]
    await asyncio.sleep(0.1)
    assert q.active.pop_nowait() is None and len(q) == 0
    q.close()
