"""SPDY/3.1 framing — the server side of what client-go's exec, attach and port-forward speak.

Kubernetes piece: github.com/moby/spdystream (and its spdy package), which client-go and the
kubelet speak after an `Upgrade: SPDY/3.1` (httpstream/spdy), and which kubectl 1.31+ tunnels
inside a WebSocket for port-forward (subprotocol `SPDY/3.1+portforward.k8s.io`, KEP-4006):
frames may arrive split across reads or messages. Pure: `FrameReader.feed(bytes)` -> frames,
`Session.receive(bytes)` -> stream events (SYN_STREAM, data, FIN, RST, GOAWAY; PINGs
answered), and encoders for the frames a server sends. Header blocks are zlib streams primed
with the SPDY/3 dictionary (one stream per direction for the whole session).

Flow control: spdystream neither sends WINDOW_UPDATE nor waits for one (its frame handler drops
them), so neither side of a Kubernetes SPDY session ever blocks on a window; this side ignores
them too, which is what keeps a multi-MiB `kubectl cp` flowing.
"""

from __future__ import annotations

import struct
import zlib
from typing import NamedTuple

SYN_STREAM, SYN_REPLY, RST_STREAM, SETTINGS, PING, GOAWAY, HEADERS, WINDOW_UPDATE = (
    1, 2, 3, 4, 6, 7, 8, 9)
FLAG_FIN = 0x01
RST_CANCEL = 5
VERSION = 3

_WORDS = ["options", "head", "post", "put", "delete", "trace", "accept", "accept-charset", "accept-encoding", "accept-language", "accept-ranges", "age", "allow", "authorization", "cache-control", "connection", "content-base", "content-encoding", "content-language", "content-length", "content-location", "content-md5", "content-range", "content-type", "date", "etag", "expect", "expires", "from", "host", "if-match", "if-modified-since", "if-none-match", "if-range", "if-unmodified-since", "last-modified", "location", "max-forwards", "pragma", "proxy-authenticate", "proxy-authorization", "range", "referer", "retry-after", "server", "te", "trailer", "transfer-encoding", "upgrade", "user-agent", "vary", "via", "warning", "www-authenticate", "method", "get", "status"] + ["200 OK", "version", "HTTP/1.1", "url", "public", "set-cookie", "keep-alive",
             "origin"]
_TAIL = (
    "100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505"
    "203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request"
    "401 Unauthorized403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented"
    "503 Service UnavailableJan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 "
    "Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMTchunked,text/html,image/png,image/jpg,image/gif,"
    "application/xml,application/xhtml+xml,text/plain,text/javascript,publicprivatemax-age="
    "gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0."
)
#: the SPDY/3 header-compression dictionary (draft 3, section 2.6.10.1): length-prefixed
#: header names and values, then a tail of common strings (adler32 0xe3c6a7c2, 1423 bytes)
DICTIONARY = b"".join(struct.pack(">I", len(w)) + w.encode() for w in _WORDS) + _TAIL.encode()


class ControlFrame(NamedTuple):
    type: int
    flags: int
    payload: bytes


class DataFrame(NamedTuple):
    stream_id: int
    flags: int
    data: bytes


class ProtocolError(ValueError):
    pass


class FrameReader:
    """Bytes in (in any pieces) -> whole frames out."""

    def __init__(self) -> None:
        self.buffer = bytearray()

    def feed(self, data: bytes) -> list[ControlFrame | DataFrame]:
        self.buffer += data
        frames: list[ControlFrame | DataFrame] = []
        while len(self.buffer) >= 8:
            length = int.from_bytes(self.buffer[5:8], "big")
            if len(self.buffer) < 8 + length:
                break
            head = bytes(self.buffer[:8])
            payload = bytes(self.buffer[8:8 + length])
            del self.buffer[:8 + length]
            if head[0] & 0x80:
                version = int.from_bytes(head[0:2], "big") & 0x7FFF
                if version != VERSION:
                    raise ProtocolError(f"unsupported SPDY version {version}")
                frames.append(ControlFrame(int.from_bytes(head[2:4], "big"), head[4], payload))
            else:
                frames.append(DataFrame(int.from_bytes(head[0:4], "big") & 0x7FFFFFFF,
                                        head[4], payload))
        return frames


class HeaderCodec:
    """The two zlib streams of a session: one inflating the peer's header blocks, one
    deflating ours."""

    def __init__(self) -> None:
        self._inflate = zlib.decompressobj(zdict=DICTIONARY)
        self._deflate = zlib.compressobj(zdict=DICTIONARY)

    def decode(self, block: bytes) -> dict[str, str]:
        try:
            raw = self._inflate.decompress(block)
        except zlib.error as exc:
            raise ProtocolError(f"bad header block: {exc}") from None
        if len(raw) < 4:
            return {}
        count = int.from_bytes(raw[:4], "big")
        pos, headers = 4, {}
        for _ in range(count):
            size = int.from_bytes(raw[pos:pos + 4], "big")
            name = raw[pos + 4:pos + 4 + size].decode("latin-1")
            pos += 4 + size
            size = int.from_bytes(raw[pos:pos + 4], "big")
            headers[name.lower()] = raw[pos + 4:pos + 4 + size].decode("latin-1")
            pos += 4 + size
        return headers

    def encode(self, headers: dict[str, str]) -> bytes:
        raw = struct.pack(">I", len(headers))
        for name, value in headers.items():
            n, v = name.lower().encode("latin-1"), value.encode("latin-1")
            raw += struct.pack(">I", len(n)) + n + struct.pack(">I", len(v)) + v
        return self._deflate.compress(raw) + self._deflate.flush(zlib.Z_SYNC_FLUSH)


class SynStream(NamedTuple):
    stream_id: int
    headers: dict[str, str]
    fin: bool


def read_syn_stream(frame: ControlFrame, codec: HeaderCodec) -> SynStream:
    if len(frame.payload) < 10:
        raise ProtocolError("short SYN_STREAM")
    stream_id = int.from_bytes(frame.payload[0:4], "big") & 0x7FFFFFFF
    return SynStream(stream_id, codec.decode(frame.payload[10:]), bool(frame.flags & FLAG_FIN))


class Reset(NamedTuple):
    """RST_STREAM from the peer: the stream is gone both ways."""

    stream_id: int


class GoAway(NamedTuple):
    """GOAWAY from the peer: it opens no more streams."""

    last_stream: int


Event = SynStream | DataFrame | Reset | GoAway


class Session:
    """The server side of one SPDY session: bytes from the client -> (bytes to answer at once,
    stream events). PINGs are answered here; HEADERS blocks are inflated (the zlib stream must
    stay in step) and dropped; SETTINGS and WINDOW_UPDATE are ignored (see the docstring)."""

    def __init__(self) -> None:
        self.reader = FrameReader()
        self.codec = HeaderCodec()

    def receive(self, data: bytes) -> tuple[bytes, list[Event]]:
        """Raises ProtocolError on bytes that are not SPDY/3."""
        out = bytearray()
        events: list[Event] = []
        for frame in self.reader.feed(data):
            if isinstance(frame, DataFrame):
                events.append(frame)
            elif frame.type == SYN_STREAM:
                events.append(read_syn_stream(frame, self.codec))
            elif frame.type == PING:
                out += ping(frame.payload)
            elif frame.type == RST_STREAM:
                events.append(Reset(stream_of(frame)))
            elif frame.type == HEADERS:
                self.codec.decode(frame.payload[4:])
            elif frame.type == GOAWAY:
                events.append(GoAway(stream_of(frame)))
        return bytes(out), events

    def reply(self, stream_id: int, fin: bool = False) -> bytes:
        """SYN_REPLY accepting a client's stream (no headers, as spdystream's server sends)."""
        return syn_reply(stream_id, self.codec, fin=fin)


def stream_of(frame: ControlFrame) -> int:
    """The stream id a RST_STREAM / HEADERS / WINDOW_UPDATE frame is about."""
    return int.from_bytes(frame.payload[0:4], "big") & 0x7FFFFFFF


def control(frame_type: int, flags: int, payload: bytes) -> bytes:
    return struct.pack(">HHI", 0x8000 | VERSION, frame_type,
                       (flags << 24) | len(payload)) + payload


def syn_reply(stream_id: int, codec: HeaderCodec, headers: dict[str, str] | None = None,
              fin: bool = False) -> bytes:
    return control(SYN_REPLY, FLAG_FIN if fin else 0,
                   struct.pack(">I", stream_id) + codec.encode(headers or {}))


def data(stream_id: int, payload: bytes, fin: bool = False) -> bytes:
    return struct.pack(">II", stream_id, ((FLAG_FIN if fin else 0) << 24) | len(payload)) + payload


def rst_stream(stream_id: int, status: int = RST_CANCEL) -> bytes:
    return control(RST_STREAM, 0, struct.pack(">II", stream_id, status))


def ping(ping_id: bytes) -> bytes:
    return control(PING, 0, ping_id[:4])


def goaway(last_stream: int, status: int = 0) -> bytes:
    return control(GOAWAY, 0, struct.pack(">II", last_stream, status))
