"""The kubelet's containerLogs endpoint over a log source (aiohttp test server, no cluster)."""

from __future__ import annotations

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from minikube_py.kubelet.logs import LogServer, lines_until, log_line, render

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
