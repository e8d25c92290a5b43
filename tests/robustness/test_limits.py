"""Slow clients and greedy clients: a request that does not finish within --request-timeout
(e.g. a body sent a few bytes at a time) gets 504 Timeout and writes nothing; a client with
too many open watches gets 429 for the next one."""

from __future__ import annotations

import asyncio
from pathlib import Path

import orjson

from tests.apiserver.conftest import start_api

CMS = "/api/v1/namespaces/default/configmaps"


async def test_a_body_trickled_in_past_the_request_timeout_is_504_and_writes_nothing(tmp_path: Path):
    api, runner, store, session = await start_api(tmp_path, request_timeout=0.3)
    try:
        before = await store.current_revision()
        body = orjson.dumps({"apiVersion": "v1", "kind": "ConfigMap",
                             "metadata": {"name": "slow"}, "data": {"a": "b"}})
        host, port = api.url.removeprefix("http://").split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(f"POST {CMS} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                     f"Content-Length: {len(body)}\r\n\r\n".encode() + body[:10])
        await writer.drain()
        head = await asyncio.wait_for(reader.read(4096), 5)  # the rest never comes
        writer.close()
        status_line, _, rest = head.partition(b"\r\n")
        assert status_line.startswith(b"HTTP/1.1 504")
        status = orjson.loads(rest.partition(b"\r\n\r\n")[2])
        assert status["reason"] == "Timeout" and "--request-timeout" in status["message"]
        assert await store.current_revision() == before
        code, _ = await api.get("/healthz")
        assert code == 200
    finally:
        await session.close()
        await runner.cleanup()
        await store.close()


async def test_a_client_past_its_watch_limit_gets_429_until_it_closes_one(tmp_path: Path):
    api, runner, store, session = await start_api(tmp_path, max_watches_per_client=2)
    try:
        url = api.url + CMS + "?watch=true"
        first = await session.get(url)
        second = await session.get(url)
        assert first.status == 200 and second.status == 200
        async with session.get(url) as third:
            assert third.status == 429 and third.headers["Retry-After"] == "1"
            status = await third.json()
            assert status["reason"] == "TooManyRequests" and "too many open watches" in \
                status["message"]
        first.close()
        # an idle stream's close is noticed at its next write (an event, or the bookmark)
        await api.post(CMS, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "e"}})
        for _ in range(50):
            async with session.get(url + "&timeoutSeconds=1") as again:
                if again.status == 200:
                    break
            await asyncio.sleep(0.05)
        assert again.status == 200
        second.close()
    finally:
        await session.close()
        await runner.cleanup()
        await store.close()
