"""The kubelet's containerLogs endpoint over a log source (aiohttp test server, no cluster)."""

from __future__ import annotations

import asyncio
import time

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from minikube_py.kubelet.logs import (
    AccessLog,
    LogServer,
    LogSpan,
    access_line,
    lines_until,
    log_line,
    merge,
    render,
)

NOW = 1000.0


def spans(ns: str, pod: str, container: str, previous: bool):
    if (pod, container) == ("p", "web"):
        return (900.0, 940.0) if previous else (NOW - 10, None)
    if (pod, container) == ("done", "web"):
        return None if previous else (NOW - 100, NOW - 95)
    return None


@pytest.fixture
async def client():
    app = web.Application()
    app.add_routes(LogServer(spans, interval=1.0, clock=lambda: NOW).routes())
    async with TestClient(TestServer(app)) as c:
        yield c


def test_lines_are_deterministic() -> None:
    assert log_line("ns", "p", "web", 0) == "container web of pod ns/p started"
    assert lines_until(10.0, 9.0, 1.0) == 0 and lines_until(10.0, 12.5, 1.0) == 5
    assert render("ns", "p", "web", 0, 2, 0.0, 1.0, True).startswith(b"1970-01-01T00:00:00.000")


async def test_tail_limit_since_previous_and_finished(client: TestClient) -> None:
    resp = await client.get("/containerLogs/default/p/web")
    assert len((await resp.text()).splitlines()) == 13
    resp = await client.get("/containerLogs/default/p/web?tailLines=2")
    assert (await resp.text()).splitlines() == ["web: heartbeat 10", "web: heartbeat 11"]
    resp = await client.get("/containerLogs/default/p/web?limitBytes=5")
    assert await resp.text() == "conta"
    resp = await client.get("/containerLogs/default/p/web?sinceSeconds=2")  # stamped >= 998
    assert (await resp.text()).splitlines() == ["web: heartbeat 9", "web: heartbeat 10",
                                                "web: heartbeat 11"]
    resp = await client.get("/containerLogs/default/p/web?previous=true")
    assert len((await resp.text()).splitlines()) == 43  # the instance before: 40 s of lines
    resp = await client.get("/containerLogs/default/done/web?follow=true")
    assert len((await resp.text()).splitlines()) == 8  # finished: the log stops there
    resp = await client.get("/containerLogs/default/done/web?previous=true")
    assert resp.status == 400
    assert 'previous terminated container "web" in pod "done" not found' in await resp.text()
    resp = await client.get("/containerLogs/default/nope/web")
    assert resp.status == 404
    resp = await client.get("/containerLogs/default/p/web?tailLines=x")
    assert resp.status == 400


# -- a server's access lines, merged with its generated lines -----------------------------------

def test_merge_keeps_time_order_and_the_tail() -> None:
    gen = [(1.0, b"g1\n"), (2.0, b"g2\n"), (3.0, b"g3\n")]
    acc = [(1.5, b"a1\n"), (3.0, b"a2\n"), (3.5, b"a3\n")]
    assert [line for _, line in merge(gen, acc, None)] == [
        b"g1\n", b"a1\n", b"g2\n", b"g3\n", b"a2\n", b"a3\n"]  # a tie: the generated line first
    assert [line for _, line in merge(gen, acc, 2)] == [b"a2\n", b"a3\n"]
    assert merge([], acc, 0) == [] and merge(gen, [], None) == gen


def test_access_lines_in_nginx_combined_and_httpd_common_format() -> None:
    when = 1795668115.0  # 2026-11-26T04:41:55Z
    assert access_line("nginx:1.27", "10.244.0.1", when, "GET /hello HTTP/1.1", 200, 612, None,
                       "curl/8.5.0") == (b'10.244.0.1 - - [26/Nov/2026:04:41:55 +0000] '
                                         b'"GET /hello HTTP/1.1" 200 612 "-" "curl/8.5.0"\n')
    assert access_line("docker.io/library/httpd", "127.0.0.1", when, "HEAD / HTTP/1.0", 200, 0,
                       "x", "y") == (b'127.0.0.1 - - [26/Nov/2026:04:41:55 +0000] '
                                     b'"HEAD / HTTP/1.0" 200 -\n')


ACCESS = AccessLog()
ACCESS.write(NOW - 8.5, 1, b"A1\n")   # between heartbeat 2 (991) and heartbeat 3 (992)
ACCESS.write(NOW, 1, b"A2\n")   # with the last line (heartbeat 11, at 1000): after it


OLD_ACCESS = AccessLog()
OLD_ACCESS.write(901.5, 1, b"old request\n")


def served(ns: str, pod: str, container: str, previous: bool):
    if (pod, container) == ("s", "web"):
        return LogSpan(900.0, 903.0, OLD_ACCESS) if previous else LogSpan(NOW - 10, None, ACCESS)
    if (pod, container) == ("live", "web") and not previous:
        return LogSpan(LIVE.started, None, LIVE.log)
    return None


class Live:
    started = 0.0
    log: AccessLog | None = None


LIVE = Live()


@pytest.fixture
async def served_client():
    app = web.Application()
    app.add_routes(LogServer(served, interval=1.0, clock=lambda: NOW).routes())
    async with TestClient(TestServer(app)) as c:
        yield c


async def test_server_log_merges_access_lines(served_client: TestClient) -> None:
    resp = await served_client.get("/containerLogs/default/s/web")
    lines = (await resp.text()).splitlines()
    assert len(lines) == 15
    assert lines[3:6] == ["web: heartbeat 2", "A1", "web: heartbeat 3"]
    assert lines[-2:] == ["web: heartbeat 11", "A2"]
    resp = await served_client.get("/containerLogs/default/s/web?tailLines=3")
    assert (await resp.text()).splitlines() == ["web: heartbeat 10", "web: heartbeat 11", "A2"]
    resp = await served_client.get("/containerLogs/default/s/web?sinceSeconds=1")  # >= 999
    assert (await resp.text()).splitlines() == ["web: heartbeat 10", "web: heartbeat 11", "A2"]
    resp = await served_client.get("/containerLogs/default/s/web?timestamps=true&tailLines=1")
    assert await resp.text() == "1970-01-01T00:16:40.000000Z A2\n"
    resp = await served_client.get("/containerLogs/default/s/web?limitBytes=3&tailLines=1")
    assert await resp.text() == "A2\n"
    resp = await served_client.get("/containerLogs/default/s/web?previous=true&tailLines=3")
    assert (await resp.text()).splitlines() == ["old request", "web: heartbeat 3",
                                                "web: heartbeat 4"]  # stops at 903


async def test_a_follower_gets_the_first_access_line_at_once() -> None:
    """No access log until the first request; then a follower sees it within the poll, not
    at the next generated line (the interval here is long)."""
    LIVE.started, LIVE.log = time.time(), None
    app = web.Application()
    app.add_routes(LogServer(served, interval=30.0).routes())
    async with TestClient(TestServer(app)) as c:
        resp = await c.get("/containerLogs/default/live/web?follow=true")
        head = await resp.content.readline()
        assert head.startswith(b"container web of pod default/live started")
        await resp.content.readline()
        await resp.content.readline()
        LIVE.log = AccessLog()
        LIVE.log.write(time.time(), 1, b"first request\n")
        assert await asyncio.wait_for(resp.content.readline(), 2) == b"first request\n"
        LIVE.log.write(time.time(), 1, b"second request\n")
        assert await asyncio.wait_for(resp.content.readline(), 2) == b"second request\n"
        resp.close()
