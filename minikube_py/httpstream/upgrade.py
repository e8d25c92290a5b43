"""Plain HTTP/1.1 connection upgrades (`Upgrade: SPDY/3.1`): taking over an aiohttp server
connection, dialling one as a client, and relaying two upgraded connections byte for byte.

Kubernetes piece: k8s.io/apimachinery/pkg/util/httpstream (`Handshake`: the
`X-Stream-Protocol-Version` negotiation), httpstream/spdy's `ResponseUpgrader` (the 101 answer,
then the raw connection) and `SpdyRoundTripper` (the client's upgrade request), and
apimachinery/pkg/util/proxy's `UpgradeAwareHandler`, which is how the API server passes an
upgraded exec/attach/port-forward connection to the kubelet: it dials the kubelet with the
client's upgrade request, and once the kubelet answers 101 it copies bytes both ways without
reading them.

aiohttp upgrades only to WebSocket on its own: an `Upgrade: SPDY/3.1` request is an ordinary
request to it, whose connection would be parsed as HTTP again after the answer. `accept()`
installs a payload parser on the connection before the 101 goes out (the client sends nothing
before reading the 101, so no byte is parsed as HTTP), the same hook aiohttp's own
WebSocketResponse uses; from then on every byte the client sends lands in a StreamReader.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from aiohttp import web

PROTOCOL_HEADER = "X-Stream-Protocol-Version"
ACCEPTED_HEADER = "X-Accepted-Stream-Protocol-Versions"
SPDY_31 = "SPDY/3.1"
_READ_LIMIT = 1 << 20
_HEAD_LIMIT = 64 << 10


def is_spdy_request(headers: Mapping[str, str]) -> bool:
    """httpstream.IsUpgradeRequest for SPDY: `Connection: upgrade` and `Upgrade: SPDY/3.1`."""
    connection = headers.get("Connection", "").lower()
    upgrade = headers.get("Upgrade", "").lower()
    return "upgrade" in connection and SPDY_31.lower() in upgrade


def client_protocols(values: Iterable[str]) -> list[str]:
    """The protocols a client offers, in its order: one header line each (client-go), or
    comma-joined by an intermediary."""
    return [p.strip() for value in values for p in value.split(",") if p.strip()]


def negotiate(offered: list[str], supported: Iterable[str]) -> str | None:
    """httpstream.Handshake's choice: the first protocol the *client* offers that the server
    speaks; None when none is shared."""
    server = set(supported)
    return next((p for p in offered if p in server), None)


class _Feed:
    """The payload parser aiohttp feeds an upgraded connection's bytes to."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self.reader = reader

    def feed_data(self, data: bytes) -> tuple[bool, bytes]:
        self.reader.feed_data(data)
        return False, b""

    def feed_eof(self) -> None:
        self.reader.feed_eof()


class Upgraded:
    """One side of an upgraded connection: bytes in (`reader`), bytes out (`write`)."""

    def __init__(self, reader: asyncio.StreamReader, transport: asyncio.BaseTransport,
                 response: web.StreamResponse | None = None,
                 writer: asyncio.StreamWriter | None = None) -> None:
        self.reader = reader
        self.transport = transport
        self.response = response
        self._writer = writer

    async def write(self, data: bytes) -> None:
        if not data or self.closing:
            return
        if self._writer is not None:
            self._writer.write(data)
            await self._writer.drain()
        else:
            assert self.response is not None
            await self.response.write(data)

    @property
    def closing(self) -> bool:
        return self.transport.is_closing()

    def close(self) -> None:
        self.transport.close()


async def accept(request: web.Request, headers: dict[str, str]) -> Upgraded:
    """Answer `101 Switching Protocols` with `headers` and take the connection over."""
    transport = request.transport
    if transport is None:
        raise ConnectionResetError("the client went away before the upgrade")
    reader = asyncio.StreamReader(limit=_READ_LIMIT)
    reader.set_transport(transport)  # type: ignore[arg-type]  # pauses reading when full
    request.protocol.set_parser(_Feed(reader))  # type: ignore[arg-type]
    response = web.StreamResponse(status=101, reason="Switching Protocols", headers={
        "Connection": "Upgrade", "Upgrade": SPDY_31, **headers})
    response.force_close()
    await response.prepare(request)
    return Upgraded(reader, transport, response=response)


@dataclass
class Answer:
    """A backend's answer to an upgrade request: 101 and the connection, or the refusal."""

    status: int
    headers: dict[str, list[str]]
    body: bytes = b""
    upgraded: Upgraded | None = None

    def header(self, name: str) -> str:
        return ",".join(self.headers.get(name.lower(), []))


async def dial(url: str, method: str, headers: list[tuple[str, str]],
               ssl_context: ssl.SSLContext | None, timeout: float = 10.0,
               server_hostname: str | None = None) -> Answer:
    """Send an upgrade request to `url` (path and query included) on a new connection and read
    the answer's head; on 101 the connection is handed over, else its body is read. The TLS
    name checked is `server_hostname` when given (an aggregated API's `<svc>.<ns>.svc`)."""
    parts = urlsplit(url)
    secure = parts.scheme == "https"
    host = parts.hostname or ""
    port = parts.port or (443 if secure else 80)
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    reader, writer = await asyncio.wait_for(asyncio.open_connection(
        host, port, ssl=ssl_context if secure else None, limit=_READ_LIMIT,
        server_hostname=(server_hostname or host) if secure else None), timeout)
    try:
        head = [f"{method} {target} HTTP/1.1", f"Host: {parts.netloc}",
                "Connection: Upgrade", f"Upgrade: {SPDY_31}"]
        head += [f"{name}: {value}" for name, value in headers]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
        raw = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout)
        if len(raw) > _HEAD_LIMIT:
            raise ConnectionError("the backend's answer head is too large")
        answer = _parse_head(raw)
        if answer.status == 101:
            answer.upgraded = Upgraded(reader, writer.transport, writer=writer)
            return answer
        length = answer.header("content-length")
        body = (await asyncio.wait_for(reader.readexactly(int(length)), timeout)
                if length.isdigit() else await asyncio.wait_for(reader.read(_HEAD_LIMIT), timeout))
        answer.body = body
        writer.close()
        return answer
    except BaseException:
        writer.close()
        raise


def _parse_head(raw: bytes) -> Answer:
    lines = raw.decode("latin-1").split("\r\n")
    status_line = lines[0].split(" ", 2)
    if len(status_line) < 2 or not status_line[1].isdigit():
        raise ConnectionError(f"malformed HTTP answer: {lines[0]!r}")
    headers: dict[str, list[str]] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep:
            headers.setdefault(name.strip().lower(), []).append(value.strip())
    return Answer(int(status_line[1]), headers)


async def relay(a: Upgraded, b: Upgraded) -> None:
    """Copy bytes both ways until one side ends, then close both (UpgradeAwareHandler)."""

    async def pump(source: Upgraded, sink: Upgraded) -> None:
        while not sink.closing:
            chunk = await source.reader.read(64 << 10)
            if not chunk:
                return
            await sink.write(chunk)

    tasks = [asyncio.ensure_future(pump(a, b)), asyncio.ensure_future(pump(b, a))]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        a.close()
        b.close()
