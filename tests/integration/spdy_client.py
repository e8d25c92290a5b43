"""The client side of a SPDY/3.1 remotecommand or port-forward session, written the way
client-go's spdystream speaks it (its own zlib header stream, odd stream ids, streams created
with a `streamtype` header, FIN to half-close), for tests that drive the API server and the
kubelet over a raw `Upgrade: SPDY/3.1` connection."""

from __future__ import annotations

import asyncio
import struct

from minikube_py.httpstream import spdy, upgrade


async def connect(url: str, *protocols: str, method: str = "POST") -> upgrade.Answer:
    """The upgrade request client-go's SpdyRoundTripper sends (one header line per protocol)."""
    return await upgrade.dial(url, method, [(upgrade.PROTOCOL_HEADER, p) for p in protocols],
                              None)


class SpdyClient:
    def __init__(self, conn: upgrade.Upgraded) -> None:
        self.conn = conn
        self.codec = spdy.HeaderCodec()
        self.reader = spdy.FrameReader()
        self.next_id = 1
        self.data: dict[int, bytes] = {}
        self.fins: set[int] = set()
        self.replies: set[int] = set()
        self.goaway = False

    async def create(self, **headers: str) -> int:
        stream, self.next_id = self.next_id, self.next_id + 2
        block = self.codec.encode(headers)
        await self.conn.write(spdy.control(spdy.SYN_STREAM, 0,
                                           struct.pack(">IIBB", stream, 0, 0, 0) + block))
        return stream

    async def send(self, stream: int, data: bytes, fin: bool = False) -> None:
        await self.conn.write(spdy.data(stream, data, fin))

    async def read(self, until=None, timeout: float = 10) -> None:
        """Frames until the server says GOAWAY or hangs up (or `until()` is true)."""
        async def loop() -> None:
            while not self.goaway and (until is None or not until()):
                chunk = await self.conn.reader.read(65536)
                if not chunk:
                    return
                for frame in self.reader.feed(chunk):
                    if isinstance(frame, spdy.DataFrame):
                        self.data[frame.stream_id] = self.data.get(frame.stream_id, b"") + frame.data
                        if frame.flags & spdy.FLAG_FIN:
                            self.fins.add(frame.stream_id)
                    elif frame.type == spdy.SYN_REPLY:
                        self.replies.add(spdy.stream_of(frame))
                        self.codec.decode(frame.payload[4:])
                    elif frame.type == spdy.GOAWAY:
                        self.goaway = True

        await asyncio.wait_for(loop(), timeout)
