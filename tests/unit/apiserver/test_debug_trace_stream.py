"""`/debug/trace` (and the console's live journey, which streams through the same handler)
over a ring that was emptied while its numbering went on — what `Cluster.trace_recording`
leaves after every test of a session: the follower says once what it missed, then waits
for new records with the event loop free, instead of answering the same loss again and
again without ever yielding the loop (the cluster froze until another thread's cluster
happened to write a record)."""

from __future__ import annotations

import asyncio
import time

import aiohttp
from aiohttp import test_utils, web

from minikube_py.apiserver.debug_trace import TraceEndpoint
from minikube_py.trace import STORE, TraceRing


def fill(ring: TraceRing, n: int, start: int = 0) -> None:
    for i in range(start, start + n):
        ring.emit(STORE, "c", "pods", "default", f"p{i}", "", ("ADDED", f"/k/{i}", i, 0))


def test_since_an_emptied_ring_resumes_past_what_it_lost() -> None:
    ring = TraceRing()
    fill(ring, 100)
    ring.clear()
    records, missed = ring.since(0)
    assert records == [] and missed == 100  # resume at 0 + 100: nothing is reported twice
    assert ring.since(0 + missed) == ([], 0)


def test_a_record_written_during_the_walk_is_not_counted_lost(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A follower resumes at `seq + missed` when nothing came back, so `missed` must not
    count a record another thread appended after the walk: it would be skipped."""
    from minikube_py.trace import ring as ring_module

    ring = TraceRing()
    fill(ring, 3)
    walk = ring_module._after

    def walk_then_another_thread_writes(records, seq):  # type: ignore[no-untyped-def]
        out = walk(records, seq)
        fill(ring, 1, start=3)  # seq 4, after the walk saw nothing past 3
        return out

    monkeypatch.setattr(ring_module, "_after", walk_then_another_thread_writes)
    assert ring.since(3) == ([], 0)
    monkeypatch.undo()
    assert [r.seq for r in ring.since(3)[0]] == [4]


async def test_follow_on_an_emptied_ring_keeps_the_loop_free() -> None:
    ring = TraceRing()
    fill(ring, 100)
    ring.clear()  # empty, last_seq 100
    endpoint = TraceEndpoint(ring, keepalive=0.2)
    app = web.Application()
    endpoint.install(app.router)
    lags: list[float] = []

    async def tick() -> None:
        while True:
            before = time.monotonic()
            await asyncio.sleep(0.01)
            lags.append(time.monotonic() - before - 0.01)

    ticker = asyncio.ensure_future(tick())
    received = b""
    async with test_utils.TestServer(app) as server, aiohttp.ClientSession() as session, \
            session.get(server.make_url("/debug/trace?since=0")) as resp:
        assert resp.status == 200
        deadline = time.monotonic() + 3
        # until a keepalive (the follower waited a whole keepalive for a record), then a
        # new record reaches it
        while b": keepalive" not in received and time.monotonic() < deadline \
                and len(received) < 1 << 20:
            received += await asyncio.wait_for(resp.content.readany(), 3)
        assert b": keepalive" in received, received[:200]
        assert received.count(b"event: lost") == 1, received.count(b"event: lost")
        assert b"event: lost\ndata: 100\n\n" in received
        fill(ring, 1, start=100)
        while b"id: 101\n" not in received and time.monotonic() < deadline + 3:
            received += await asyncio.wait_for(resp.content.readany(), 3)
        assert b"id: 101\n" in received
        endpoint.close()
    ticker.cancel()
    assert lags and max(lags) < 0.5, max(lags)
