"""The transport contract under the REST client: send one request, or open a stream.

Kubernetes v1.0 piece: pkg/client's `http.RoundTripper` beneath RESTClient. Two transports
sit behind this one interface (the httpx model): HTTPTransport (http.py) for separate
processes and the real wire, and InProcessTransport (inprocess.py) that hands the request to
the API server's own handler pipeline with no socket. The REST client above never knows
which one it has.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import NamedTuple, Protocol


class RawResponse(NamedTuple):
    status: int
    content_type: str
    body: bytes


class Transport(Protocol):
    async def request(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, str] | None = None,
        body: bytes | None = None,
        content_type: str = "application/json",
        accept: str = "application/json",
    ) -> RawResponse:
        """One request, whole response."""
        ...

    def stream(
        self, path: str, *, query: Mapping[str, str] | None = None
    ) -> AsyncIterator[bytes]:
        """`GET path` as a stream of lines (watch events, followed logs). The first item is
        raised as an error if the status is not 200; iteration ends when the server ends the
        stream. Closing the iterator (aclose) ends the request."""
        ...

    async def close(self) -> None: ...
