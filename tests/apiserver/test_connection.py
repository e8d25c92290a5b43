"""Connection handling (apiserver/connection.py): Go's header limits answered with a Status,
the header read timeout against slow-header clients, and watches that end as soon as their
client leaves."""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path

import orjson
from structlog.testing import capture_logs

from tests.apiserver.conftest import API, start_api

PODS = "/api/v1/namespaces/default/pods"


async def _raw(url: str, payload: bytes) -> tuple[int, dict]:
    """Send raw bytes, read the whole answer (the server closes after an error)."""
    host, port = url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(payload)
    await writer.drain()
    data = await asyncio.wait_for(reader.read(), 5)
    writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    code = int(head.split(b" ", 2)[1])
    if b"chunked" in head.lower():
        size, _, rest = body.partition(b"\r\n")
        body = rest[: int(size, 16)]
    return code, orjson.loads(body)


async def test_over_long_request_line_or_header_is_a_431_status(api: API) -> None:
    # under the 1 MiB limit the request reaches the API: the selector parser answers
    async with api.session.get(api.url + PODS + "?labelSelector=" + "a=" * 20000) as resp:
        assert resp.status == 400 and (await resp.json())["kind"] == "Status"
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    server_log = logging.getLogger("aiohttp.server")
    keep = Keep()
    server_log.addHandler(keep)
    try:
        with capture_logs() as logs:
            async with api.session.get(api.url + PODS + "?labelSelector=" + "a" * (1 << 20)) as resp:
                status = await resp.json()
                assert resp.status == 431 and status["kind"] == "Status"
                assert status["code"] == 431 and "1048576 bytes" in status["message"]
            code, status = await _raw(api.url, b"GET /api HTTP/1.1\r\nHost: x\r\nX-Big: "
                                      + b"b" * ((1 << 20) + 10) + b"\r\n\r\n")
            assert code == 431 and status["code"] == 431
    finally:
        server_log.removeHandler(keep)
    # the client's error: one WARNING line each, never aiohttp's ERROR traceback
    assert not [r for r in records if r.levelno >= logging.ERROR]
    warnings = [e for e in logs if e["event"] == "unparseable request"]
    assert len(warnings) == 2 and all(e["log_level"] == "warning" for e in warnings)
    code, _ = await api.get("/healthz")
    assert code == 200


async def test_a_malformed_request_line_is_a_400_status(api: API) -> None:
    for payload in (b"GARBAGE\r\n\r\n", b"GET /api HTTP/9.9\r\n\r\n",
                    b"GET /api HTTP/1.1\r\nBad Header Line\r\n\r\n"):
        code, status = await _raw(api.url, payload)
        assert code == 400, payload
        assert status["kind"] == "Status" and status["reason"] == "BadRequest"
        assert status["message"].startswith("malformed HTTP request: ")


async def test_slow_headers_are_cut_off_after_the_read_header_timeout(tmp_path: Path) -> None:
    api, runner, store, session = await start_api(tmp_path, read_header_timeout=0.5)
    try:
        host, port = api.url.removeprefix("http://").split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(b"GET /api HTTP/1.1\r\nHost: x\r\n")
        started = time.monotonic()
        closed_after = None
        for _ in range(60):  # one header byte every 0.1 s: never finishing the headers
            try:
                writer.write(b"X")
                await writer.drain()
                data = await asyncio.wait_for(reader.read(100), 0.1)
            except asyncio.TimeoutError:
                continue
            except ConnectionError:
                data = b""
            assert data == b""  # closed without an answer, as Go closes it
            closed_after = time.monotonic() - started
            break
        writer.close()
        assert closed_after is not None and 0.3 <= closed_after < 3
        # other clients are served throughout
        code, _ = await api.get("/api/v1/namespaces")
        assert code == 200
    finally:
        await session.close()
        await runner.cleanup()
        await store.close()


async def test_a_watch_ends_as_soon_as_its_client_leaves(tmp_path: Path) -> None:
    """With one watch allowed per client, a second watch is refused while the first is open
    and accepted right after the first client disconnects — well before the stream's next
    write or its 5-second liveness check would have noticed."""
    api, runner, store, session = await start_api(tmp_path, max_watches_per_client=1)
    try:
        host, port = api.url.removeprefix("http://").split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(f"GET {PODS}?watch=true HTTP/1.1\r\nHost: localhost\r\n\r\n".encode())
        await writer.drain()
        assert b" 200 " in await asyncio.wait_for(reader.readline(), 5)
        code, status = await api.get(PODS + "?watch=true&timeoutSeconds=1")
        assert code == 429, status
        writer.close()
        left = time.monotonic()
        while True:
            async with session.get(api.url + PODS + "?watch=true&timeoutSeconds=1") as resp:
                if resp.status == 200:
                    break
            assert time.monotonic() - left < 2, "the closed watch still counts"
            await asyncio.sleep(0.02)
        watchers = sum(len(c.watchers) for c in api.server.cachers.values()
                       if hasattr(c, "watchers"))
        assert watchers <= 1
    finally:
        await session.close()
        await runner.cleanup()
        await store.close()
