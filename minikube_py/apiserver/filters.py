"""The filter chain every request passes before its handler.

Kubernetes v1.0 piece: pkg/apiserver/handlers.go (RecoverPanics, MaxInFlightLimit with its
long-running-request exemption, the request-info resolver) and pkg/httplog (the access log).
Order, outermost first: request info -> instrumentation (metrics, access log) -> recovery
(every error becomes a Status; an unexpected exception is a logged 500 and the server keeps
serving) -> max-in-flight (429 + Retry-After beyond the limit; watches and logs exempt).

The four filters run inside **one** aiohttp middleware. Each middleware layer costs a
coroutine frame and aiohttp's wrapper per request — about 1.5 µs each, a tenth of the whole
budget of a GET — so the chain is one function calling small, separately readable parts
(`InFlight`, `Instruments`, `recover`) in the order above.
"""

from __future__ import annotations

import asyncio
import time
import traceback
from collections.abc import Awaitable, Callable
from typing import Any

import structlog
from aiohttp import web

from ..api import errors
from ..api.params import parse_bool
from ..logs import debug_enabled
from ..loopwatch import DESCRIPTIONS as DOING
from ..loopwatch import current_task
from ..trace import REQUEST, TRACE
from . import render
from .authn import UserInfo
from .authz.guard import USER, authorization_view
from .connection import IN_PROCESS_PEER as IN_PROCESS
from .connection import client_left
from .debug_trace import CREATED
from .hostcheck import HostCheck
from .metrics import APIServerMetrics
from .requestinfo import RequestInfo, resolve_cached
from .warning import warning_headers

log = structlog.get_logger(component="apiserver")

#: where the resolved RequestInfo travels with the request
INFO: web.RequestKey[RequestInfo] | str = (
    web.RequestKey("info", RequestInfo) if hasattr(web, "RequestKey") else "info")
#: `Warning` header texts a handler wants sent (unknown fields under fieldValidation=Warn)
WARNINGS: web.RequestKey[list] | str = (
    web.RequestKey("warnings", list) if hasattr(web, "RequestKey") else "warnings")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
_MUTATING = frozenset({"create", "update", "patch", "delete", "deletecollection"})
_HTTP_REASONS = {404: "NotFound", 405: "MethodNotAllowed", 413: "RequestEntityTooLarge",
                 400: "BadRequest", 415: "UnsupportedMediaType", 406: "NotAcceptable"}


def request_info(request: web.Request) -> RequestInfo:
    watch = parse_bool(request.query.get("watch")) if request.query_string else False
    return resolve_cached(request.method, request.path, watch)


def what(request: web.Request) -> str:
    """The request as the event-loop watchdog names it in a stall log (loopwatch.py): verb,
    path without the query, and the user once authenticated. Called only if a stall is
    logged, so the hot path formats nothing."""
    user = request.get(USER)
    text = f"{request.method} {request.path}"
    return f"{text} user={user.name}" if user is not None else text


class Instruments:
    """Request count and latency by verb/resource/code, and the access log (at debug, like
    v1.0's httplog at -v=3). Metric children are looked up once per label set and cached: a
    prometheus `labels()` call costs ~3 µs, a dict hit ~50 ns."""

    def __init__(self, metrics: APIServerMetrics) -> None:
        self.metrics = metrics
        self.counters: dict[tuple, Any] = {}
        self.histograms: dict[tuple, Any] = {}
        self.access_log = debug_enabled()

    def record(self, request: web.Request, info: RequestInfo, status: int, elapsed: float) -> None:
        if TRACE.active:
            created = request.get(CREATED)
            name, uid = (info.name, "") if created is None else \
                (created.get("name", ""), created.get("uid", ""))
            TRACE.emit(REQUEST, request.headers.get("User-Agent", ""), info.resource,
                       info.namespace, name, uid,
                       (info.verb, request.path, info.subresource, status,
                        round(elapsed * 1000, 3)))
        if info.is_resource:
            key = ("WATCH" if info.verb == "watch" else request.method, info.group,
                   info.resource, info.subresource)
            histogram = self.histograms.get(key)
            if histogram is None:
                histogram = self.histograms[key] = self.metrics.latency.labels(*key)
            histogram.observe(elapsed)
            counter = self.counters.get((key, status))
            if counter is None:
                counter = self.counters[key, status] = self.metrics.requests.labels(*key, str(status))
            counter.inc()
        if self.access_log:
            log.debug("request", verb=request.method, uri=request.path_qs, status=status,
                      latency_ms=round(elapsed * 1000, 3),
                      user_agent=request.headers.get("User-Agent"), remote=request.remote)


class InFlight:
    """At most `readonly` reads and `mutating` writes at once (0 = no limit); beyond that,
    429 with Retry-After (v1.0 MaxInFlightLimit). Watches and logs are long-running and
    exempt, as upstream. The in-flight gauge reads the counters when scraped.

    Requests of this process's own components (the in-process transport) are counted but never
    refused: the limit protects the server from outside clients, while the components inside
    `start` share its event loop and are bounded by their own workers. Refusing them only
    added a 1 s retry stall each (5000 kubelets' status updates at a burst of pod creations
    went past 200 writes in flight) — upstream likewise exempts its loopback client."""

    def __init__(self, metrics: APIServerMetrics, *, readonly: int, mutating: int) -> None:
        self.counts = {"readOnly": 0, "mutating": 0}
        self.limits = {"readOnly": readonly, "mutating": mutating}
        for kind in self.counts:
            metrics.inflight.labels(kind).set_function(lambda kind=kind: self.counts[kind])
        self.rejected = {kind: metrics.rejected.labels(kind) for kind in self.counts}

    def kind(self, info: RequestInfo) -> str | None:
        """The counter a request takes, or None when it is exempt."""
        if info.long_running or not info.is_resource:
            return None
        return "mutating" if info.verb in _MUTATING else "readOnly"

    def enter(self, kind: str, *, refusable: bool = True) -> None:
        limit = self.limits[kind]
        if refusable and limit and self.counts[kind] >= limit:
            self.rejected[kind].inc()
            raise errors.too_many_requests(1)
        self.counts[kind] += 1

    def leave(self, kind: str) -> None:
        self.counts[kind] -= 1


def recover(request: web.Request, exc: BaseException) -> web.Response:
    """Any failure as a Status response: StatusErrors as they are, aiohttp's HTTP errors with
    upstream's reasons, anything else as a logged 500 (v1.0 RecoverPanics)."""
    if isinstance(exc, errors.StatusError):
        response = render.status_response(exc, request.headers.get("Accept"))
        written = set(response.headers.getall("Warning", ()))
        for header in warning_headers(request.get(WARNINGS) or []):
            if header not in written:  # upstream writes them on errors too, each once
                response.headers.add("Warning", header)
        if exc.code == 413:
            response.force_close()  # do not read (linger on) the rest of an oversized body
        return response
    if isinstance(exc, web.HTTPNotFound):
        return render.status_response(errors.not_found_path())  # no route: upstream's NotFoundHandler
    if isinstance(exc, web.HTTPException) and exc.status >= 400:
        reason = _HTTP_REASONS.get(exc.status, "BadRequest" if exc.status < 500 else "InternalError")
        message = exc.text or exc.reason
        return render.status_response(errors.StatusError(exc.status, reason, message))
    if client_left(request, exc):
        raise exc  # no panic, nobody to answer: connection.py logs one debug line
    log.error("panic serving request", method=request.method, uri=request.path_qs,
              error=repr(exc), traceback="".join(traceback.format_exception(exc)))
    return render.status_response(errors.internal_error(
        f"{type(exc).__name__} while serving {request.method} {request.path}"))


class WatchesPerClient:
    """At most `limit` open watches per client (0 = no limit); beyond that, 429. A client is
    its authenticated user on the secure port, else its address; the in-process transport
    (this process's own components) is exempt. One misbehaving client cannot hold the
    server's watch capacity (upstream has no such filter; the issue asks for one)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.open: dict[str, int] = {}

    def client(self, request: web.Request) -> str | None:
        if not self.limit or request.remote == IN_PROCESS:
            return None
        user = request.get(USER)
        return f"user:{user.name}" if user is not None else f"address:{request.remote}"

    def enter(self, client: str) -> None:
        count = self.open.get(client, 0)
        if count >= self.limit:
            raise errors.StatusError(
                429, "TooManyRequests",
                f"too many open watches from this client ({count}, the limit is {self.limit}): "
                "close some, or share one watch per resource (an informer)",
                {"retryAfterSeconds": 1}, {"Retry-After": "1"})
        self.open[client] = count + 1

    def leave(self, client: str) -> None:
        count = self.open.get(client, 1) - 1
        if count:
            self.open[client] = count
        else:
            self.open.pop(client, None)


class Deadlines:
    """upstream's WithTimeoutForNonLongRunningRequests: a short request still running after
    `seconds` is cancelled and answered 504 Timeout. A write is one atomic store transaction,
    so a timed-out request either happened or did not — never half (the client finds out by
    reading, as with upstream's 504).

    Not a timer per request: that costs ~5 µs of a ~22 µs GET. Requests are noted in a dict
    (their task and due time) and one sweeper task, alive only while requests are in
    flight, cancels the overdue ones every `seconds`/4 (at most 1 s)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.resolution = min(1.0, seconds / 4)
        self.running: dict[asyncio.Task, float] = {}
        self.expired: set[asyncio.Task] = set()
        self._sweeper: asyncio.Task | None = None

    def enter(self, task: asyncio.Task | None) -> asyncio.Task | None:
        """Note the request's task (the chain's, from loopwatch.current_task: asyncio's own
        is a Python function, ~0.3 µs)."""
        if task is None:
            return None
        loop = task.get_loop()
        self.running[task] = loop.time() + self.seconds
        if self._sweeper is None:
            self._sweeper = loop.create_task(self._sweep(), name="apiserver-request-deadlines")
        return task

    def leave(self, task: asyncio.Task | None) -> None:
        self.running.pop(task, None)  # type: ignore[arg-type]
        self.expired.discard(task)  # type: ignore[arg-type]

    def timed_out(self, task: asyncio.Task | None) -> bool:
        """After a CancelledError: was it ours? Then the task is uncancelled, to answer 504."""
        if task is None or task not in self.expired:
            return False
        task.uncancel()
        return True

    async def _sweep(self) -> None:
        try:
            while self.running:
                await asyncio.sleep(self.resolution)
                now = asyncio.get_running_loop().time()
                for task, due in [item for item in self.running.items() if item[1] <= now]:
                    del self.running[task]
                    self.expired.add(task)
                    task.cancel()
        finally:
            self._sweeper = None


def filter_chain(metrics: APIServerMetrics, *, readonly: int, mutating: int,
                 guard: Callable[[web.Request, RequestInfo],
                                 web.Request | Awaitable[web.Request | None] | None] | None = None,
                 request_timeout: float = 0.0, max_watches_per_client: int = 0,
                 authorize_asserted: Callable[[UserInfo, RequestInfo], None] | None = None
                 ) -> Callable:
    """The one middleware: request info -> instrumentation -> recovery -> [authn/authz, TLS
    requests only: `guard` raises 401/403 (authz/guard.py); an in-process request carrying
    its component's identity (client/inprocess.py) is authorized by `authorize_asserted`]
    -> max-in-flight (short requests, which also get `request_timeout`) or watches per
    client (watches)."""
    instruments = Instruments(metrics)
    in_flight = InFlight(metrics, readonly=readonly, mutating=mutating)
    watches = WatchesPerClient(max_watches_per_client)
    deadlines = Deadlines(request_timeout) if request_timeout else None
    hosts = HostCheck()

    @web.middleware
    async def chain(request: web.Request, handler: Handler) -> web.StreamResponse:
        info = request[INFO] = request_info(request)
        started = time.perf_counter()
        running = current_task()
        DOING[running] = (what, (request,))  # loopwatch names it if it stalls the loop
        try:
            if request.secure:
                if guard is not None:
                    replaced = guard(request, info)
                    if replaced is not None and not isinstance(replaced, web.BaseRequest):
                        replaced = await replaced  # a service-account token: store reads
                    if replaced is not None:  # impersonation: a clone without its headers
                        request = replaced
                        DOING[running] = (what, (request,))
            else:
                hosts.check(request)  # DNS rebinding: 403 for a foreign Host (hostcheck.py)
                # only the in-process transport sets a user before this point
                if authorize_asserted is not None and (user := request.get(USER)) is not None:
                    authorize_asserted(user, authorization_view(request, info))
            kind = in_flight.kind(info)
            if kind is not None:
                in_flight.enter(kind, refusable=request.remote != IN_PROCESS)
                task = deadlines.enter(running) if deadlines is not None else None
                try:
                    response = await handler(request)
                except asyncio.CancelledError:
                    if deadlines is None or not deadlines.timed_out(task):
                        raise
                    raise errors.timeout(
                        "Timeout: request did not complete within requested timeout - the "
                        f"limit is {request_timeout:g}s (--request-timeout)") from None
                finally:
                    in_flight.leave(kind)
                    if deadlines is not None:
                        deadlines.leave(task)
            elif info.verb == "watch" and (client := watches.client(request)) is not None:
                watches.enter(client)
                try:
                    response = await handler(request)
                finally:
                    watches.leave(client)
            else:
                response = await handler(request)
        except web.HTTPException as exc:
            if exc.status < 400:
                raise
            response = recover(request, exc)
        except Exception as exc:  # noqa: BLE001 - the point of RecoverPanics
            response = recover(request, exc)
        finally:
            DOING.pop(running, None)
        instruments.record(request, info, response.status, time.perf_counter() - started)
        return response

    return chain
