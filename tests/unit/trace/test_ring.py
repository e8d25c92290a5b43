"""The trace ring: bounds, resume by sequence number, followers woken without polling,
recording only while someone looks."""

from __future__ import annotations

import asyncio
import itertools
import threading

import pytest

from minikube_py.trace import REQUEST, SCHEDULE, STORE, TraceRing, to_json


def fill(ring: TraceRing, n: int, kind: str = STORE) -> None:
    for i in range(n):
        ring.emit(kind, "c", "pods", "default", f"p{i}", "", ("ADDED", f"/k/{i}", i, 0))


def test_bounded_and_numbered() -> None:
    ring = TraceRing(capacity=5)
    fill(ring, 12)
    assert len(ring.records) == 5
    assert [r.seq for r in ring.records] == [8, 9, 10, 11, 12]
    assert ring.last_seq == 12


def test_resume_since_and_missed_count() -> None:
    ring = TraceRing(capacity=5)
    fill(ring, 12)
    records, missed = ring.since(10)
    assert [r.seq for r in records] == [11, 12] and missed == 0
    records, missed = ring.since(3)  # 4..7 fell out of the ring
    assert [r.seq for r in records] == [8, 9, 10, 11, 12] and missed == 4
    assert ring.since(12) == ([], 0)
    ring.clear()
    assert ring.since(12) == ([], 0)
    assert ring.since(9) == ([], 3)  # 10..12 gone with the clear
    fill(ring, 1)
    assert [r.seq for r in ring.since(12)[0]] == [13]  # numbering goes on


def test_active_only_with_viewer_or_holder() -> None:
    ring = TraceRing()
    assert not ring.active
    with ring.viewer():
        assert ring.active and ring.viewers == 1
        with ring.viewer():
            assert ring.viewers == 2
        assert ring.active
    assert not ring.active
    ring.hold()
    assert ring.active
    ring.release()
    ring.release()  # an extra release does not go negative
    assert not ring.active
    ring.hold()
    with ring.viewer():
        pass
    assert ring.active  # still held


def test_capacity_must_be_positive() -> None:
    with pytest.raises(ValueError):
        TraceRing(capacity=0)


async def test_follower_woken_by_emit() -> None:
    ring = TraceRing()
    waiter = asyncio.ensure_future(ring.wait(0, timeout=5))
    await asyncio.sleep(0.01)
    assert not waiter.done()
    fill(ring, 1)
    assert await asyncio.wait_for(waiter, 1) is True
    assert await ring.wait(0, timeout=0.01) is True  # already there: no wait
    assert await ring.wait(1, timeout=0.01) is False  # nothing new: times out
    assert not ring._waiters  # a timed-out waiter is removed


async def test_follower_woken_from_another_thread() -> None:
    ring = TraceRing()
    waiter = asyncio.ensure_future(ring.wait(0, timeout=5))
    await asyncio.sleep(0.01)
    thread = threading.Thread(target=fill, args=(ring, 1))
    thread.start()
    assert await asyncio.wait_for(waiter, 2) is True
    thread.join()


class Attempt:
    result, node, feasible, total = "scheduled", "node-1", 2, 3

    def to_dict(self) -> dict:
        return {"result": "scheduled", "node": "node-1", "scores": {"node-1": 9}}


def test_to_json_names_the_detail_fields() -> None:
    ring = TraceRing()
    ring.emit(REQUEST, "kubectl/v1.31", "pods", "ns", "p", "", ("create", "/api/v1/x", "",
                                                                 201, 1.5))
    ring.emit(SCHEDULE, "scheduler", "pods", "ns", "p", "u-1", Attempt())
    request, schedule = (to_json(r) for r in ring.records)
    assert request == {"seq": 1, "time": request["time"], "kind": "request",
                       "component": "kubectl/v1.31", "resource": "pods", "namespace": "ns",
                       "name": "p", "uid": "", "verb": "create", "path": "/api/v1/x",
                       "subresource": "", "status": 201, "latency_ms": 1.5}
    assert schedule["detail"] == {"result": "scheduled", "node": "node-1", "scores": {"node-1": 9}}
    assert to_json(ring.records[1], full=False)["detail"] == {
        "result": "scheduled", "node": "node-1", "feasible": 2, "total": 3}
    assert schedule["uid"] == "u-1"


async def test_a_cancelled_follower_stops_waiting() -> None:
    ring = TraceRing()
    waiter = asyncio.ensure_future(ring.wait(0))
    await asyncio.sleep(0.01)
    assert len(ring._waiters) == 1
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert not ring._waiters


def test_a_full_replay_finishes_while_another_thread_keeps_writing() -> None:
    """A replay walks the whole ring while another thread (another cluster's loop in the
    same process) appends: it returns an ordered view with the right lost count, in bounded
    time (a walk that meets an append falls back to a snapshot instead of retrying)."""
    import sys
    import time

    ring = TraceRing(capacity=50_000)
    fill(ring, 50_000)
    stop = threading.Event()

    def writer() -> None:
        while not stop.is_set():
            fill(ring, 1)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # the writer gets the GIL in the middle of every walk
    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    try:
        started = time.monotonic()
        for _ in range(5):
            records, lost = ring.since(0)
            assert records and lost == records[0].seq - 1
            assert all(a.seq < b.seq for a, b in itertools.pairwise(records))
        assert time.monotonic() - started < 10
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(interval)
