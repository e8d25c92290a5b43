"""Reading Server-Sent Events (the wire format of `/debug/trace`) line by line.

Kubernetes piece: none (the W3C EventSource format; the console's browser parses it itself).
Pure and incremental: feed it lines as they arrive, get whole events back.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ServerEvent:
    event: str   # "message" unless the stream named it (e.g. "lost")
    data: str
    id: str


class EventParser:
    """Accumulates `field: value` lines until a blank line ends the event."""

    def __init__(self) -> None:
        self._event = ""
        self._data: list[str] = []
        self._id = ""

    def feed(self, line: str) -> ServerEvent | None:
        line = line.rstrip("\r\n")
        if not line:
            if not self._data:
                self._event = ""
                return None
            out = ServerEvent(self._event or "message", "\n".join(self._data), self._id)
            self._event, self._data = "", []
            return out
        if line.startswith(":"):
            return None  # a comment (keepalive)
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "data":
            self._data.append(value)
        elif field == "event":
            self._event = value
        elif field == "id":
            self._id = value
        return None
