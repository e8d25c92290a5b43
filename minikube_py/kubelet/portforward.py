"""One `kubectl port-forward` session: SPDY streams in, simulated TCP connections behind them.

Kubernetes piece: pkg/kubelet/cri/streaming/portforward/httpstream.go (the kubelet's SPDY
port-forward handler). For each local connection kubectl opens a pair of SPDY streams sharing
a `requestID` header — `streamType: error` first, then `streamType: data`, both naming the
`port`. The kubelet replies to each (SYN_REPLY), connects the data stream to the port in the
pod's network namespace, copies bytes both ways, and writes a failure (e.g. connection
refused) as text on the error stream. Here the "connection" is the simulated HTTP server
(http_sim.HTTPConnection), so the whole session is a pure bytes-in -> bytes-out machine:
`receive(bytes)` returns the bytes to send back. When either side ends a connection, both
streams of its pair are closed (FIN), which is what makes kubectl close the local socket.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..httpstream import spdy
from .http_sim import HTTPConnection

#: port -> a connection to it, or the error text when nothing listens there
Connector = Callable[[int], "HTTPConnection | str"]


@dataclass
class _Pair:
    error: int | None = None
    data: int | None = None
    port: int = 0
    conn: HTTPConnection | None = None
    done: bool = False


@dataclass
class PortForwardSession:
    connect: Connector
    spdy: spdy.Session = field(default_factory=spdy.Session)
    pairs: dict[str, _Pair] = field(default_factory=dict)
    streams: dict[int, str] = field(default_factory=dict)  # stream id -> request id
    closed: bool = False

    def receive(self, data: bytes) -> bytes:
        """Feed bytes from kubectl; raises spdy.ProtocolError on garbage."""
        out, events = self.spdy.receive(data)
        answer = bytearray(out)
        for event in events:
            if isinstance(event, spdy.DataFrame):
                answer += self._data(event)
            elif isinstance(event, spdy.SynStream):
                answer += self._syn_stream(event)
            elif isinstance(event, spdy.Reset):
                self._forget(event.stream_id)
            else:  # GoAway
                self.closed = True
        return bytes(answer)

    def _syn_stream(self, syn: spdy.SynStream) -> bytes:
        out = self.spdy.reply(syn.stream_id)
        request = syn.headers.get("requestid", str(syn.stream_id))
        kind = syn.headers.get("streamtype", "")
        pair = self.pairs.setdefault(request, _Pair())
        self.streams[syn.stream_id] = request
        try:
            pair.port = int(syn.headers.get("port", ""))
        except ValueError:
            pair.port = 0
        if kind == "error":
            pair.error = syn.stream_id
        elif kind == "data":
            pair.data = syn.stream_id
            if pair.port <= 0 or pair.port > 65535:
                return out + self._fail(pair, f"invalid port {syn.headers.get('port', '')!r}")
            connected = self.connect(pair.port)
            if isinstance(connected, str):
                return out + self._fail(pair, connected)
            pair.conn = connected
        else:
            return out + spdy.rst_stream(syn.stream_id, 1)  # PROTOCOL_ERROR
        return out

    def _data(self, frame: spdy.DataFrame) -> bytes:
        request = self.streams.get(frame.stream_id)
        pair = self.pairs.get(request) if request is not None else None
        if pair is None or frame.stream_id != pair.data or pair.done:
            return b""  # the error stream's half-close, or a stream already finished
        out = b""
        if pair.conn is not None and frame.data:
            answer = pair.conn.feed(frame.data)
            if answer:
                out += spdy.data(pair.data, answer)
            if pair.conn.closed:
                return out + self._finish(pair)
        if frame.flags & spdy.FLAG_FIN:
            out += self._finish(pair)
        return out

    def _fail(self, pair: _Pair, message: str) -> bytes:
        out = spdy.data(pair.error, message.encode()) if pair.error is not None else b""
        return out + self._finish(pair)

    def _finish(self, pair: _Pair) -> bytes:
        """Close both streams of a pair (our side): kubectl then closes the local socket."""
        if pair.done:
            return b""
        pair.done = True
        out = b""
        for stream in (pair.data, pair.error):
            if stream is not None:
                out += spdy.data(stream, b"", fin=True)
        return out

    def _forget(self, stream_id: int) -> None:
        request = self.streams.pop(stream_id, None)
        pair = self.pairs.get(request) if request is not None else None
        if pair is not None and pair.error not in self.streams and pair.data not in self.streams:
            self.pairs.pop(request, None)
