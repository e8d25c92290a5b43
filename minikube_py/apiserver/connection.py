"""Connection handling: Go's net/http server settings, as kube-apiserver configures them.

Kubernetes piece: the `http.Server` that v1.0's cmd/kube-apiserver/app/server.go builds for both
ports (`MaxHeaderBytes: 1 << 20`) and the later k8s.io/apiserver secure_serving.go, which adds
`ReadHeaderTimeout: 32 * time.Second` against slow-header (slowloris) clients.

aiohttp's connection protocol (`RequestHandler`) differs from Go's in three ways that matter to
an API server; this module closes them and nothing else:
- **Header read timeout.** A client that opens a connection and sends its headers a byte at a
  time would hold the connection for ever. aiohttp only has its keep-alive timer, which closes
  a connection that is idle *between* requests (or before the first) — so that timer is the
  header timeout here: whatever has not completed its headers `read_header_timeout` seconds
  after the connection opened or its last response was sent is closed, silently, as Go closes
  it. Idle keep-alive connections are therefore also closed after that long (Go keeps them 90 s;
  clients reconnect transparently).
- **Unparseable requests get a Status.** aiohttp answers a request its parser rejects with a
  plain-text 400 and logs a traceback at ERROR. Here the answer is a `Status` — 431 for a request
  line or header over the 1 MiB limit (Go's code for it), 400 otherwise — logged as one WARNING
  line, because it is the client's error, not the server's.
- **A client going away is not an error.** A client that stops `kubectl logs -f`, or sends
  `Expect: 100-continue` and leaves before (or after) the 100, makes the next read or write fail
  with ConnectionResetError; aiohttp logs that at ERROR with a traceback ("Error handling
  request"), and our recovery filter would call it a panic. Go's server just ends the request.
  Here such an error, when the connection is indeed gone (`client_left`), is one DEBUG line.
- **Disconnects are noticed at once.** aiohttp does not cancel a handler when its client goes
  away (that would interrupt writes half-way); a watch stream registers `on_lost` and wakes up
  to end itself as soon as its connection is lost, rather than at its next write.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import structlog
from aiohttp import web
from aiohttp.http_exceptions import LineTooLong
from aiohttp.web_protocol import RequestHandler
from aiohttp.web_request import BaseRequest

from ..api import errors
from . import render

#: the peer address in-process requests carry (`request.remote`, set by the in-process
#: transport of minikube_py/client); the API server exempts them from the in-flight and
#: watches-per-client limits, as upstream exempts its loopback client
IN_PROCESS_PEER = "in-process"

log = structlog.get_logger(component="apiserver")

#: Go's net/http DefaultMaxHeaderBytes, which v1.0 set explicitly: the request line or one
#: header may be this long (aiohttp's default is 8190 bytes)
MAX_HEADER_BYTES = 1 << 20
#: k8s.io/apiserver secure_serving.go ReadHeaderTimeout
READ_HEADER_TIMEOUT = 32.0


def parser_limits() -> dict[str, int]:
    """aiohttp request-parser arguments for Go's header limits."""
    return {"max_line_size": MAX_HEADER_BYTES, "max_field_size": MAX_HEADER_BYTES}


class APIRequestHandler(RequestHandler):
    """One client connection of the API server (see the module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._lost_callbacks: list[Callable[[], None]] = []

    def on_lost(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call `callback` when this connection is lost; returns a function that cancels it.
        A connection already lost calls it soon (on the loop), so callers need no race check."""
        if self.transport is None:
            asyncio.get_running_loop().call_soon(callback)
            return lambda: None
        self._lost_callbacks.append(callback)

        def cancel() -> None:
            if callback in self._lost_callbacks:
                self._lost_callbacks.remove(callback)

        return cancel

    def connection_lost(self, exc: BaseException | None) -> None:
        callbacks, self._lost_callbacks = self._lost_callbacks, []
        super().connection_lost(exc)
        for callback in callbacks:
            callback()

    def handle_error(self, request: BaseRequest, status: int = 500,
                     exc: BaseException | None = None,
                     message: str | None = None) -> web.StreamResponse:
        """aiohttp calls this for a request its parser rejected (status 400), for failures
        outside our middleware (its `Expect: 100-continue` answer), and for a client's
        departure the middleware passes on; the middleware answers everything else itself."""
        if exc is not None and client_left(request, exc):
            log.debug("client went away", remote=request.remote, method=request.method,
                      uri=request.path_qs, error=str(exc) or type(exc).__name__)
            # nobody to answer: aiohttp ends the connection quietly on a ConnectionError
            raise ConnectionError("the client went away") from exc
        if status >= 500 or exc is None:
            return super().handle_error(request, status, exc, message)
        error = parse_error_status(exc)
        log.warning("unparseable request", remote=request.remote, code=error.code,
                    error=error.message)
        response = render.status_response(error)
        response.force_close()
        return response


async def while_connected(request: BaseRequest, work: Awaitable[None]) -> bool:
    """Run `work` until it ends or the client's connection is lost, whichever comes first;
    a lost connection cancels it (upstream cancels the request's context). True when `work`
    ran to its end. For streams that may write nothing for a long time (a quiet followed log),
    where a failed write would otherwise be the only sign that the client left. A departure is
    one debug line, as everywhere."""
    task = asyncio.ensure_future(work)
    protocol = request.protocol
    if not isinstance(protocol, APIRequestHandler):
        await task
        return True
    forget = protocol.on_lost(task.cancel)
    try:
        await task
        return True
    except asyncio.CancelledError:
        if not task.cancelled() or asyncio.current_task().cancelling():
            raise  # we are being cancelled ourselves, not `work` for a lost client
        log.debug("client went away", remote=request.remote, method=request.method,
                  uri=request.path_qs, error="connection lost")
        return False
    finally:
        forget()


def client_left(request: BaseRequest, exc: BaseException) -> bool:
    """Whether `exc` is the client going away: a connection error (a write to a closing
    transport, a body cut short by a lost connection) while this request's connection is gone
    or closing. A ConnectionError with the client still there (say, from a backend) is not."""
    if not isinstance(exc, ConnectionError):
        return False
    transport = request.transport
    return transport is None or transport.is_closing()


def parse_error_status(exc: BaseException) -> errors.StatusError:
    """The Status for a request aiohttp's parser rejected: 431 when a line or header passed
    the size limit (kube-apiserver's Go server answers 431 there), else 400."""
    if isinstance(exc, LineTooLong):
        return errors.StatusError(
            431, "", f"request header fields too large: the request line and each header "
                     f"may be at most {MAX_HEADER_BYTES} bytes")
    detail = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    return errors.bad_request(f"malformed HTTP request: {detail}")


class _Connections(web.Server):
    """aiohttp's Server, making APIRequestHandler protocols."""

    def __call__(self) -> RequestHandler:
        return APIRequestHandler(self, loop=self._loop, **self._kwargs)


class APIRunner(web.AppRunner):
    """An AppRunner whose connections are APIRequestHandlers with Go's limits."""

    def __init__(self, app: web.Application, *,
                 read_header_timeout: float = READ_HEADER_TIMEOUT) -> None:
        super().__init__(app, access_log=None, keepalive_timeout=read_header_timeout,
                         **parser_limits())

    async def _make_server(self) -> web.Server:
        server = await super()._make_server()
        # the Application builds its Server privately; only the protocol it makes changes
        server.__class__ = _Connections
        return server
