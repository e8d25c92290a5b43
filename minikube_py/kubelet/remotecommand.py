"""The streams of one exec/attach session, over a WebSocket or over SPDY.

Kubernetes piece: k8s.io/kubelet/pkg/cri/streaming/remotecommand — `NewOptions` (which streams
the client asked for), `createWebSocketStreams` (websocket.go: channels 0-4 on one WebSocket)
and `createHTTPStreamStreams` (httpstream.go: one SPDY stream per channel, created by the
client with a `streamType` header, the session starting once every expected stream exists),
and the error-stream formats (`v1WriteStatusFunc`: the message text on failure only;
`v4WriteStatusFunc`: a metav1.Status JSON either way, with the exit code as a cause).

Both transports offer the same face to the session runner (streaming.py): `send(channel,
data)`, `incoming()` yielding (channel, data) from the client — (CLOSE, [STDIN]) when the
client's stdin ends — and `finish()`. A stream the client did not ask for is not opened:
nothing is written to it and nothing read from it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass

import orjson
import structlog
from aiohttp import WSMsgType, web

from ..api.params import parse_bool
from ..httpstream import spdy
from ..httpstream.upgrade import Upgraded
from ..httpstream.wsstream import (
    CLOSE,
    ERROR,
    RESIZE,
    STDERR,
    STDIN,
    STDOUT,
    ChannelProtocol,
)

log = structlog.get_logger(component="kubelet")

#: the remotecommand SPDY protocols (X-Stream-Protocol-Version), their versions; upstream's
#: SPDY v5 is v4 (the close signal is SPDY's own FIN)
SPDY_PROTOCOLS = {"v5.channel.k8s.io": 5, "v4.channel.k8s.io": 4, "v3.channel.k8s.io": 3,
                  "v2.channel.k8s.io": 2, "channel.k8s.io": 1}
#: upstream's default streamCreationTimeout
STREAM_CREATION_TIMEOUT = 30.0
_STREAM_TYPES = {"stdin": STDIN, "stdout": STDOUT, "stderr": STDERR, "error": ERROR,
                 "resize": RESIZE}


@dataclass(frozen=True)
class Options:
    """remotecommand.NewOptions: the streams asked for. With a tty there is no stderr (upstream
    drops it: a terminal has one output)."""

    stdin: bool
    stdout: bool
    stderr: bool
    tty: bool

    @classmethod
    def from_query(cls, query: Mapping[str, str]) -> Options:
        tty = parse_bool(query.get("tty"))
        return cls(parse_bool(query.get("stdin")), parse_bool(query.get("stdout")),
                   parse_bool(query.get("stderr")) and not tty, tty)

    def problem(self) -> str | None:
        if not (self.stdin or self.stdout or self.stderr):
            return "you must specify at least 1 of stdin, stdout, stderr"
        return None

    def writes(self, channel: int) -> bool:
        return {STDOUT: self.stdout, STDERR: self.stderr}.get(channel, channel == ERROR)


def status_payload(version: int, code: int, argv: list[str]) -> bytes | None:
    """What the error stream carries at the end: v4+ a Status JSON (exit code as its cause),
    v1-v3 the error text on failure and nothing on success."""
    if code == 0:
        return orjson.dumps({"metadata": {}, "status": "Success"}) if version >= 4 else None
    message = (f"command terminated with non-zero exit code: error executing command "
               f"[{' '.join(argv)}], exit code {code}")
    if version < 4:
        return message.encode()
    return orjson.dumps({
        "metadata": {}, "status": "Failure", "message": message, "reason": "NonZeroExitCode",
        "details": {"causes": [{"reason": "ExitCode", "message": str(code)}]}})


class WebSocketStreams:
    """Channels 0-4 of one WebSocket (wsstream.Conn with the remotecommand protocols)."""

    def __init__(self, ws: web.WebSocketResponse, protocol: ChannelProtocol,
                 options: Options) -> None:
        self.ws = ws
        self.protocol = protocol
        self.options = options
        self.version = protocol.version

    async def start(self) -> bool:
        """An empty message on the lowest channel the client reads: the session is open."""
        first = STDOUT if self.options.stdout else STDERR if self.options.stderr else ERROR
        await self._write(first, b"")
        return True

    async def send(self, channel: int, data: bytes) -> None:
        if self.options.writes(channel):
            await self._write(channel, data)

    async def _write(self, channel: int, data: bytes) -> None:
        if self.ws.closed:
            return
        message = self.protocol.encode(channel, data)
        if isinstance(message, str):
            await self.ws.send_str(message)
        else:
            await self.ws.send_bytes(message)

    async def incoming(self) -> AsyncIterator[tuple[int, bytes]]:
        async for msg in self.ws:
            if msg.type not in (WSMsgType.BINARY, WSMsgType.TEXT):
                break
            decoded = self.protocol.decode(msg.data)
            if decoded is None:
                continue
            channel, data = decoded
            if channel == STDIN and not self.options.stdin:
                continue
            if channel in (STDIN, RESIZE, CLOSE):
                yield channel, data

    async def finish(self, code: int, argv: list[str]) -> None:
        payload = status_payload(self.version, code, argv)
        if payload is not None:
            await self._write(ERROR, payload)
        await self.ws.close()


class SpdyStreams:
    """One SPDY session of remotecommand: the client creates a stream per channel (`error`
    first, then stdin/stdout/stderr as asked, `resize` with a tty from v3 on); each gets a
    SYN_REPLY; data on them is the channel's; its FIN ends the client's side of it."""

    def __init__(self, conn: Upgraded, version: int, options: Options) -> None:
        self.conn = conn
        self.version = version
        self.options = options
        self.session = spdy.Session()
        self.streams: dict[int, int] = {}  # channel -> stream id
        self.channels: dict[int, int] = {}  # stream id -> channel
        self.pending: list[tuple[int, bytes]] = []
        self.ended = False

    def expected(self) -> int:
        o = self.options
        return 1 + o.stdin + o.stdout + o.stderr + (o.tty and self.version >= 3)

    async def start(self) -> bool:
        """Wait for the client's streams; False when it does not create them in time (upstream
        gives up silently too: `timed out waiting for client to create streams`)."""
        try:
            await asyncio.wait_for(self._await_streams(), STREAM_CREATION_TIMEOUT)
        except (TimeoutError, spdy.ProtocolError, ConnectionError) as exc:
            log.warning("exec: SPDY streams not created", error=str(exc) or "timeout")
            self.conn.close()
            return False
        return True

    async def _await_streams(self) -> None:
        while len(self.streams) < self.expected():
            if not await self._read_once():
                raise ConnectionError("the client went away before creating its streams")

    async def _read_once(self) -> bool:
        """Read and handle what the client sent next; False at its EOF or GOAWAY."""
        chunk = await self.conn.reader.read(64 << 10)
        if not chunk:
            return False
        out, events = self.session.receive(chunk)
        answer = bytearray(out)
        alive = True
        for event in events:
            if isinstance(event, spdy.SynStream):
                answer += self.session.reply(event.stream_id)
                channel = _STREAM_TYPES.get(event.headers.get("streamtype", ""))
                if channel is None:
                    log.warning("exec: unexpected SPDY stream type",
                                stream_type=event.headers.get("streamtype"))
                    continue
                self.streams[channel] = event.stream_id
                self.channels[event.stream_id] = channel
            elif isinstance(event, spdy.DataFrame):
                channel = self.channels.get(event.stream_id)
                if channel in (STDIN, RESIZE) and event.data:
                    self.pending.append((channel, event.data))
                if channel == STDIN and event.flags & spdy.FLAG_FIN:
                    self.pending.append((CLOSE, bytes([STDIN])))
            elif isinstance(event, spdy.Reset):
                if self.channels.get(event.stream_id) == STDIN:
                    self.pending.append((CLOSE, bytes([STDIN])))
            else:
                alive = False
        await self.conn.write(bytes(answer))
        return alive

    async def send(self, channel: int, data: bytes) -> None:
        stream = self.streams.get(channel)
        if stream is not None and data and self.options.writes(channel):
            await self.conn.write(spdy.data(stream, data))

    async def incoming(self) -> AsyncIterator[tuple[int, bytes]]:
        while True:
            while self.pending:
                yield self.pending.pop(0)
            try:
                if not await self._read_once():
                    break
            except spdy.ProtocolError as exc:
                log.warning("exec: bad SPDY from the client", error=str(exc))
                break
        while self.pending:
            yield self.pending.pop(0)

    async def finish(self, code: int, argv: list[str]) -> None:
        """Status on the error stream, FIN on every stream we write, GOAWAY; then wait briefly
        for the client to hang up (closing first could reset what it has not read yet)."""
        if self.ended:
            return
        self.ended = True
        payload = status_payload(self.version, code, argv)
        out = bytearray()
        if payload is not None and ERROR in self.streams:
            out += spdy.data(self.streams[ERROR], payload)
        for channel in (STDOUT, STDERR, ERROR):
            if channel in self.streams:
                out += spdy.data(self.streams[channel], b"", fin=True)
        last = max(self.channels, default=0)
        out += spdy.goaway(last)
        try:
            await self.conn.write(bytes(out))
            await asyncio.wait_for(_drain(self.conn), 5)
        except (TimeoutError, ConnectionError):
            pass
        finally:
            self.conn.close()


async def _drain(conn: Upgraded) -> None:
    while await conn.reader.read(64 << 10):
        pass
