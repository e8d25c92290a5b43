"""In-process transport: requests go through the API server's own handler pipeline, no socket.

Kubernetes v1.0 piece: none directly — v1.0 components always dialled the master over HTTP.
This is the all-in-one optimisation that keeps v1.0's rule ("every component reaches the
cluster only through the client library and the API server") while skipping the wire: each
request becomes a real `aiohttp.web.Request` handed to the application's `_handle`, so the
router, the filter chain (request info, in-flight limits, metrics, recovery), admission,
validation and the registry run exactly as they do for kubectl. Bodies cross as bytes in both
directions, so the caller and the server never share an object.

A transport may carry the identity of the component using it (`user`, see
apiserver/authn/identities.py): the request then reaches the filter chain as that user, which
the API server authorizes as it would the same user authenticated on the secure port. Without
one, an in-process request is the API server's own loopback call: trusted, like upstream's
loopback client in system:masters.

Watches and followed logs stream through `_Connection`, an in-memory stand-in for the socket:
the response's writer and the watch cache's direct path both land in one queue of byte chunks
that `stream()` splits into lines. Its unread-byte count is the "write buffer" the watch cache
checks, so a consumer that stops reading is cut off exactly like a slow TCP client.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from typing import Any
from urllib.parse import urlencode

from aiohttp import web
from aiohttp.abc import AbstractStreamWriter
from aiohttp.base_protocol import BaseProtocol
from aiohttp.http import HttpVersion11
from aiohttp.http_parser import RawRequestMessage
from aiohttp.streams import EMPTY_PAYLOAD, StreamReader
from multidict import CIMultiDict, CIMultiDictProxy
from yarl import URL

from ..apiserver.authn import UserInfo
from ..apiserver.authz.guard import USER
from ..apiserver.connection import IN_PROCESS_PEER
from .errors import error_from_response
from .transport import RawResponse

_END = b""  # queued by the server side when the response is complete


class _Connection(BaseProtocol):
    """The server's view of the "connection" (what aiohttp's RequestHandler would be) and
    the asyncio transport it writes to, in one object: chunks go into a queue the client side
    reads, counted so the watch cache can see an unread backlog."""

    ssl_context = None
    sockname = None

    def __init__(self, loop: asyncio.AbstractEventLoop, peername: str) -> None:
        super().__init__(loop)
        self.peername = peername
        self.transport = self  # type: ignore[assignment]  # request.transport -> this
        self._chunks: asyncio.Queue[bytes] | None = None  # most requests never stream
        self.unread = 0
        self.closing = False

    # -- the asyncio.WriteTransport surface the watch cache uses -------------------------
    def write(self, data: bytes) -> None:
        """A chunk from the watch cache's direct path, framed for HTTP/1.1 chunked encoding
        (`<hex size>\\r\\n<data>\\r\\n`); we are the wire, so we take the frame off."""
        if self.closing:
            return
        start = data.index(b"\r\n") + 2
        self.put(data[start:-2])

    def is_closing(self) -> bool:
        return self.closing

    def get_write_buffer_size(self) -> int:
        return self.unread

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self.peername if name == "peername" else default

    def close(self) -> None:
        self.closing = True

    # -- the protocol surface a request body's StreamReader uses -------------------------
    def pause_reading(self) -> None:
        """Nothing to throttle: the whole request body is fed before the handler runs."""

    def resume_reading(self, resume_parser: bool = True) -> None:
        """See pause_reading (BaseProtocol's would ask our transport, which is us)."""

    # -- both sides ------------------------------------------------------------------------
    @property
    def chunks(self) -> asyncio.Queue[bytes]:
        if self._chunks is None:
            self._chunks = asyncio.Queue()
        return self._chunks

    def put(self, data: bytes) -> None:
        if data and not self.closing:
            self.unread += len(data)
            self.chunks.put_nowait(data)

    def end(self) -> None:
        self.chunks.put_nowait(_END)

    async def get(self) -> bytes:
        data = await self.chunks.get()
        self.unread -= len(data)
        return data


class _ResponseWriter(AbstractStreamWriter):
    """Where a streamed response's headers and body go: headers are remembered, body bytes
    are queued on the connection (aiohttp's StreamWriter would frame and send them)."""

    def __init__(self, connection: _Connection) -> None:
        self.connection = connection
        self.headers_written = asyncio.Event()
        self.status = 0
        self.buffer_size = 0
        self.output_size = 0
        self.length = None

    async def write_headers(self, status_line: str, headers: CIMultiDict[str]) -> None:
        self.status = int(status_line.split(" ", 2)[1])
        self.headers_written.set()

    async def write(self, chunk: bytes | bytearray | memoryview) -> None:
        self.output_size += len(chunk)
        self.connection.put(bytes(chunk))

    async def write_eof(self, chunk: bytes = b"") -> None:
        if chunk:
            await self.write(chunk)

    async def drain(self) -> None:
        return None

    def enable_compression(self, encoding: str = "deflate", strategy: int | None = None) -> None:
        return None

    def enable_chunking(self) -> None:
        return None


def _body_of(response: web.StreamResponse) -> bytes:
    body = getattr(response, "body", None)
    if body is None:
        return b""
    if isinstance(body, (bytes, bytearray)):
        return bytes(body)
    return bytes(body._value)  # a Payload built by web.Response(text=...) or json_response


class InProcessTransport:
    """The Transport contract over an aiohttp application in this process.

    The application must have been started (its on_startup ran), e.g. by the AppRunner that
    also serves it on a port, or by a bare `AppRunner.setup()` when no port is wanted.
    """

    def __init__(self, app: web.Application, *, token: str | None = None,
                 user_agent: str = "minikube-py/in-process", peername: str = IN_PROCESS_PEER,
                 client_max_size: int = 4 * 1024 * 1024, user: UserInfo | None = None) -> None:
        self.app = app
        self.user = user
        self.peername = peername
        self.client_max_size = client_max_size
        self.headers = {"User-Agent": user_agent, "Host": "in-process"}
        if token:
            self.headers["Authorization"] = f"Bearer {token}"
        self._streams: set[asyncio.Task] = set()

    def _request(self, method: str, path: str, query: Mapping[str, str] | None,
                 body: bytes | None, headers: dict[str, str], connection: _Connection,
                 writer: _ResponseWriter) -> web.Request:
        target = f"{path}?{urlencode(query)}" if query else path
        all_headers = CIMultiDict(self.headers)
        all_headers.update(headers)
        payload: Any = EMPTY_PAYLOAD
        if body is not None:
            all_headers["Content-Length"] = str(len(body))
            payload = StreamReader(connection, 2**16, loop=connection._loop)
            payload.feed_data(body)
            payload.feed_eof()
        message = RawRequestMessage(
            method, target, HttpVersion11, CIMultiDictProxy(all_headers), (), False, None,
            False, False, URL(target, encoded=True))
        request = web.Request(message, payload, connection, writer,  # type: ignore[arg-type]
                              asyncio.current_task(), connection._loop,  # type: ignore[arg-type]
                              client_max_size=self.client_max_size)
        if self.user is not None:
            request[USER] = self.user  # asserted: only code in this process can set it
        return request

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        try:
            return await self.app._handle(request)
        except web.HTTPException as exc:  # raised by the router (404/405) outside our filters
            return exc

    async def request(self, method: str, path: str, *, query: Mapping[str, str] | None = None,
                      body: bytes | None = None, content_type: str = "application/json",
                      accept: str = "application/json") -> RawResponse:
        headers = {"Accept": accept}
        if body is not None:
            headers["Content-Type"] = content_type
        connection = _Connection(asyncio.get_running_loop(), self.peername)
        writer = _ResponseWriter(connection)
        response = await self._dispatch(
            self._request(method, path, query, body, headers, connection, writer))
        if response.prepared:  # a handler streamed a bounded body (e.g. a non-follow log)
            connection.end()
            data = bytearray()
            while chunk := await connection.get():
                data += chunk
            return RawResponse(writer.status, response.content_type, bytes(data))
        return RawResponse(response.status, response.content_type, _body_of(response))

    async def stream(self, path: str, *,
                     query: Mapping[str, str] | None = None) -> AsyncIterator[bytes]:
        loop = asyncio.get_running_loop()
        connection = _Connection(loop, self.peername)
        writer = _ResponseWriter(connection)

        async def serve() -> web.StreamResponse:
            request = self._request("GET", path, query, None, {"Accept": "application/json"},
                                    connection, writer)
            try:
                return await self._dispatch(request)
            finally:
                connection.end()

        task = loop.create_task(serve())
        self._streams.add(task)
        try:
            started = loop.create_task(writer.headers_written.wait())
            await asyncio.wait((task, started), return_when=asyncio.FIRST_COMPLETED)
            started.cancel()
            if not writer.headers_written.is_set():  # answered without streaming: an error
                response = task.result()
                raise error_from_response(response.status, _body_of(response))
            if writer.status != 200:
                raise error_from_response(writer.status, b"")
            pending = b""
            while chunk := await connection.get():
                pending += chunk
                if b"\n" not in chunk:
                    continue
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    yield line + b"\n"
            if pending:
                yield pending
        finally:
            connection.close()  # the client hung up: the watch cache stops writing to us
            task.cancel()
            self._streams.discard(task)
            await asyncio.gather(task, return_exceptions=True)

    async def close(self) -> None:
        for task in list(self._streams):
            task.cancel()
        await asyncio.gather(*self._streams, return_exceptions=True)
