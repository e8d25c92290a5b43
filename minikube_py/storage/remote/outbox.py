"""Frames for one socket of the remote Store, written once per event-loop turn.

Kubernetes piece: none upstream (gRPC's HTTP/2 framing batches etcd's messages for clientv3).
Both ends of the socket use it (server.py for replies and watch events, client.py for calls):
every frame produced during one turn of the loop leaves in one write, so a burst of calls or
events costs one syscall, not one each.
"""

from __future__ import annotations

import asyncio

from . import protocol


class Outbox:
    """Frames queued for `writer`; the first `send` of a loop turn schedules the `flush`."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer
        self.frames: list[bytes] = []
        self.scheduled = False

    def send(self, frame: list) -> None:
        self.frames.append(protocol.pack(frame))
        if not self.scheduled:
            self.scheduled = True
            asyncio.get_running_loop().call_soon(self.flush)

    def flush(self) -> None:
        """Write what is queued now (also called directly before waiting on the socket)."""
        self.scheduled = False
        frames, self.frames = self.frames, []
        if frames and not self.writer.is_closing():
            self.writer.write(b"".join(frames))
