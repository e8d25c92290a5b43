"""A client going away is normal: one DEBUG line, no ERROR, no traceback.

Real sockets against the API server (its APIRunner) and the kubelet pool's log server:
stopping a followed log (`kubectl logs -f` then Ctrl-C), a client that sends
`Expect: 100-continue` and leaves before or after the 100, and a body cut short. Both
structlog's events (capture_logs) and the standard-library records aiohttp writes (caplog)
are checked.
"""

from __future__ import annotations

import asyncio
import logging
from urllib.parse import urlsplit

import pytest
import structlog

from tests.integration.test_kubelet import Cluster, cluster, phase_is  # noqa: F401 - fixture
from tests.apiserver.conftest import API

CMS = "/api/v1/namespaces/default/configmaps"


async def _connect(url: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    where = urlsplit(url)
    return await asyncio.open_connection(where.hostname, where.port)


async def _events_until(logs: list[dict], event: str, count: int, timeout: float = 5) -> None:
    for _ in range(int(timeout / 0.02)):
        if sum(e["event"] == event for e in logs) >= count:
            return
        await asyncio.sleep(0.02)


def _assert_quiet(logs: list[dict], caplog: pytest.LogCaptureFixture) -> None:
    loud = [e for e in logs if e["log_level"] in ("error", "critical", "exception")]
    assert loud == []
    records = [r for r in caplog.records if r.levelno >= logging.WARNING or r.exc_info]
    assert records == [], [r.getMessage() for r in records]


@pytest.mark.parametrize("how", ["after the 100", "before the 100", "mid-body"])
async def test_a_client_that_leaves_a_request_is_one_debug_line(
        api: API, how: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    expect = b"" if how == "mid-body" else b"Expect: 100-continue\r\n"
    with structlog.testing.capture_logs() as logs:
        reader, writer = await _connect(api.url)
        writer.write(f"POST {CMS} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json"
                     f"\r\nContent-Length: 100000\r\n".encode() + expect + b"\r\n")
        if how == "after the 100":
            assert await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5) == \
                b"HTTP/1.1 100 Continue\r\n\r\n"
        elif how == "mid-body":
            writer.write(b'{"metadata": {"name": ')
            await writer.drain()
        writer.close()
        await writer.wait_closed()
        await _events_until(logs, "client went away", 1)
        await asyncio.sleep(0.1)  # anything logged late would show too
    gone = [e for e in logs if e["event"] == "client went away"]
    assert len(gone) == 1, logs
    assert gone[0]["log_level"] == "debug" and gone[0]["method"] == "POST"
    assert gone[0]["uri"] == CMS
    _assert_quiet(logs, caplog)
    code, _ = await api.get(CMS)  # and the server carries on
    assert code == 200


async def test_stopping_a_followed_log_is_one_debug_line_per_server(
        cluster: Cluster, caplog: pytest.LogCaptureFixture) -> None:  # noqa: F811
    caplog.set_level(logging.DEBUG)
    await cluster.pod("follow", containers=[{"name": "web", "image": "nginx"}])
    await cluster.until("follow", phase_is("Running"))
    path = "/api/v1/namespaces/default/pods/follow/log?container=web&follow=true"
    with structlog.testing.capture_logs() as logs:
        reader, writer = await _connect(cluster.api.url)
        writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
        assert head.startswith(b"HTTP/1.1 200")
        await asyncio.wait_for(reader.readuntil(b"heartbeat"), 5)  # it streams
        writer.close()  # Ctrl-C
        await writer.wait_closed()
        await _events_until(logs, "log reader went away", 1)
        await asyncio.sleep(0.2)  # several more log intervals (0.05 s)
    assert [(e["event"], e["log_level"]) for e in logs if "went away" in e["event"]] == [
        ("client went away", "debug"), ("log reader went away", "debug")]
    _assert_quiet(logs, caplog)
