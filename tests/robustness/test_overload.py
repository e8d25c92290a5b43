"""Overload (issue 6): beyond the in-flight limits the API server answers 429 TooManyRequests
with Retry-After (v1.0 MaxInFlightLimit), never a 5xx, and serves later requests normally; a
watcher that stops reading is cut off (watch_max_unsent_bytes) while 1000 idle watchers and the
readers that keep up are unaffected and memory stays bounded."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import aiohttp
import orjson

from bench.robustness import overload_burst
from tests.apiserver.conftest import start_api

NS_PATH = "/api/v1/namespaces/default/configmaps"


def rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS in /proc/self/status")


async def test_more_requests_than_the_limit_get_429_never_5xx(tmp_path: Path):
    api, runner, store, session = await start_api(tmp_path, max_requests_inflight=2,
                                                  max_mutating_requests_inflight=2)
    try:
        result = await overload_burst(api.url, 150)
        assert result["429"] > 0, result
        assert result["5xx"] == 0 and result["connection_errors"] == 0, result
        assert result["ok"] + result["429"] == 150, result
        assert result["retry_after_ok"], "429 without Retry-After or TooManyRequests Status"
        assert result["later_failures"] == 0, result
        status, body = await api.get("/readyz")
        assert status == 200, body
    finally:
        await session.close()
        await runner.cleanup()
        await store.close()


async def _open_watch(session: aiohttp.ClientSession, url: str) -> aiohttp.ClientResponse:
    resp = await session.get(url, timeout=aiohttp.ClientTimeout(total=None))
    assert resp.status == 200
    return resp


async def test_slow_reader_cut_off_idle_watchers_and_fast_readers_fine(tmp_path: Path):
    limit = 256 * 1024
    api, runner, store, session = await start_api(tmp_path, watch_max_unsent_bytes=limit)
    watchers = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0))
    host, port = api.url.removeprefix("http://").split(":")
    slow_writer = None
    try:
        status, body = await api.post("/api/v1/namespaces", {"metadata": {"name": "quiet"}})
        assert status == 201, body
        idle = await asyncio.gather(*(
            _open_watch(watchers, f"{api.url}/api/v1/namespaces/quiet/configmaps?watch=1")
            for _ in range(1000)))
        fast = [await _open_watch(watchers, f"{api.url}{NS_PATH}?watch=1") for _ in range(2)]
        # the slow reader: a raw socket with a tiny receive buffer that is never read
        # (SO_RCVBUF set before connecting, so the kernel cannot absorb the flood for us)
        raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        raw.setblocking(False)
        await asyncio.get_running_loop().sock_connect(raw, (host, int(port)))
        slow_reader, slow_writer = await asyncio.open_connection(sock=raw, limit=1024)
        slow_writer.write(f"GET {NS_PATH}?watch=1 HTTP/1.1\r\nHost: localhost\r\n\r\n".encode())
        await slow_writer.drain()
        await asyncio.sleep(0.2)

        events = 150
        blob = "x" * 32_000
        rss_before = rss_bytes()

        async def read_all(resp: aiohttp.ClientResponse) -> int:
            seen = 0
            async for line in resp.content:
                if line.strip() and orjson.loads(line)["type"] == "ADDED":
                    seen += 1
                    if seen == events:
                        return seen
            return seen

        readers = [asyncio.create_task(read_all(resp)) for resp in fast]
        for i in range(events):
            status, body = await api.post(NS_PATH, {"metadata": {"name": f"big-{i:03d}"}, "data": {"b": blob}})
            assert status == 201, body
        assert await asyncio.wait_for(asyncio.gather(*readers), 20) == [events, events]
        grew = rss_bytes() - rss_before
        # ~4.8 MB of events per watcher: buffering them for the slow reader (or per idle
        # watcher) would show; allow for the readers' own garbage
        assert grew < 48 * 1024 * 1024, f"RSS grew {grew / 2**20:.1f} MiB"

        # the slow reader was cut off: its response ended (the server dropped its watch and
        # buffers no more), far short of every event
        received = b""
        while not received.endswith(b"\r\n0\r\n\r\n"):
            chunk = await asyncio.wait_for(slow_reader.read(65536), 5)
            if not chunk:
                break
            received += chunk
        assert received.endswith(b"\r\n0\r\n\r\n"), "the slow reader's watch was never ended"
        assert received.count(b'"type":"ADDED"') < events, "the slow reader got every event"

        # the idle watchers are still connected and get the events of their namespace
        status, body = await api.post("/api/v1/namespaces/quiet/configmaps", {"metadata": {"name": "ping"}})
        assert status == 201, body
        firsts = await asyncio.wait_for(asyncio.gather(*(resp.content.readline() for resp in idle[:50])), 10)
        assert all(orjson.loads(line)["object"]["metadata"]["name"] == "ping" for line in firsts)
    finally:
        if slow_writer is not None:
            slow_writer.close()
        await watchers.close()
        await session.close()
        await runner.cleanup()
        await store.close()
