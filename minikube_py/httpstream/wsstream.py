"""The WebSocket channel protocols of exec/attach/port-forward and the stream protocols of
`pods/log` — pure framing, no I/O.

Kubernetes piece: k8s.io/apimachinery/pkg/util/httpstream/wsstream (conn.go: `Conn`, the
channel protocols; stream.go: `Reader`, a byte stream as messages) with the protocol tables the
kubelet's remotecommand/portforward WebSocket handlers and the API server's stream translator
(KEP-4006) register:

- `channel.k8s.io` (and no subprotocol at all): each message is a channel byte then the data;
- `base64.channel.k8s.io`: an ASCII digit for the channel, then the data in base64, as text;
- `v4.channel.k8s.io` / `v4.base64.channel.k8s.io`: the same framing; the error channel (3)
  carries a metav1.Status JSON with the exit code;
- `v5.channel.k8s.io`: v4 plus the close signal — a message `[255, channel]` half-closes that
  channel (the client's stdin EOF).

What the server accepts is what Go's `websocket.Message.Receive` into a `[]byte` accepts: TEXT
and BINARY messages alike (the official Python client writes stdin as TEXT frames on the binary
protocols). The protocol is the first one in the *client's* offer that the server speaks.
`pods/log` uses the Reader protocols: `binary.k8s.io` (or none): raw chunks as binary
messages; `base64.binary.k8s.io`: each chunk base64 as text; at most 2048 bytes a message.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

STDIN, STDOUT, STDERR, ERROR, RESIZE = 0, 1, 2, 3, 4
#: v5's close signal: the first byte of a message `[CLOSE, channel]`
CLOSE = 255
#: wsstream.Reader's read buffer: the largest pods/log message
READER_CHUNK = 2048


@dataclass(frozen=True)
class ChannelProtocol:
    """One WebSocket subprotocol: its framing and its remotecommand version."""

    name: str
    binary: bool
    version: int

    @property
    def stream_close(self) -> bool:
        """wsstream's protocolSupportsStreamClose: only `v5.channel.k8s.io`."""
        return self.version >= 5 and self.binary

    def encode(self, channel: int, data: bytes) -> bytes | str:
        """A message on `channel`: bytes for a BINARY message, str for TEXT."""
        if self.binary:
            return bytes([channel]) + data
        return chr(ord("0") + channel) + base64.b64encode(data).decode("ascii")

    def decode(self, message: bytes | str) -> tuple[int, bytes] | None:
        """A client message (TEXT or BINARY) -> (channel, data); None for one upstream skips
        (empty, or base64 that does not decode). A v5 close signal is (CLOSE, [channel])."""
        raw = message.encode("utf-8") if isinstance(message, str) else bytes(message)
        if not raw:
            return None
        if self.stream_close and raw[0] == CLOSE:
            return (CLOSE, raw[1:2]) if len(raw) == 2 else None
        if self.binary:
            return raw[0], raw[1:]
        try:
            return raw[0] - ord("0"), base64.b64decode(raw[1:], validate=True)
        except (binascii.Error, ValueError):
            return None


def _table(*entries: tuple[str, bool, int]) -> dict[str, ChannelProtocol]:
    return {name: ChannelProtocol(name, binary, version) for name, binary, version in entries}


#: the kubelet's remotecommand WebSocket protocols plus the API server's v5 (KEP-4006); ""
#: is a client that offers none (binary, v1)
REMOTECOMMAND = _table(("v5.channel.k8s.io", True, 5), ("v4.channel.k8s.io", True, 4),
                       ("v4.base64.channel.k8s.io", False, 4), ("channel.k8s.io", True, 1),
                       ("base64.channel.k8s.io", False, 1), ("", True, 1))
#: the kubelet's port-forward WebSocket protocols (data on 2i, errors on 2i+1)
PORTFORWARD = _table(("v4.channel.k8s.io", True, 4), ("v4.base64.channel.k8s.io", False, 4),
                     ("channel.k8s.io", True, 1), ("base64.channel.k8s.io", False, 1),
                     ("", True, 1))
#: wsstream.NewDefaultReaderProtocols: pods/log (and any streamed body) over a WebSocket
READER = {"": True, "binary.k8s.io": True, "base64.binary.k8s.io": False}


def offered(header: str) -> list[str]:
    """The client's Sec-WebSocket-Protocol offer, in its order ([""] when it offers none)."""
    protocols = [p.strip() for p in header.split(",") if p.strip()]
    return protocols or [""]


def choose(header: str, supported: Iterable[str]) -> str | None:
    """wsstream's handshake: the first offered protocol that is supported, else None."""
    allowed = set(supported)
    return next((p for p in offered(header) if p in allowed), None)


def reader_messages(chunk: bytes, binary: bool) -> Iterator[bytes | str]:
    """wsstream.Reader's messages for one chunk of the stream."""
    for start in range(0, len(chunk), READER_CHUNK):
        piece = chunk[start:start + READER_CHUNK]
        yield piece if binary else base64.b64encode(piece).decode("ascii")
