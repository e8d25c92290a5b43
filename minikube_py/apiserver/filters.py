"""The filter chain every request passes before its handler.

Kubernetes v1.0 piece: pkg/apiserver/handlers.go (RecoverPanics, MaxInFlightLimit with its
long-running-request exemption, the request-info resolver) and pkg/httplog (the access log).
Order, outermost first: request info -> instrumentation (metrics, access log) -> recovery
(every error becomes a Status; an unexpected exception is a logged 500 and the server keeps
serving) -> max-in-flight (429 + Retry-After beyond the limit; watches and logs exempt).
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Awaitable, Callable
from typing import Any

import structlog
from aiohttp import web

from ..api import errors
from ..logs import debug_enabled
from . import render
from .metrics import APIServerMetrics
from .requestinfo import RequestInfo, resolve_cached

log = structlog.get_logger(component="apiserver")

#: where the resolved RequestInfo travels with the request
INFO: "web.RequestKey[RequestInfo] | str" = (
    web.RequestKey("info", RequestInfo) if hasattr(web, "RequestKey") else "info")
#: `Warning` header texts a handler wants sent (unknown fields under fieldValidation=Warn)
WARNINGS: "web.RequestKey[list] | str" = (
    web.RequestKey("warnings", list) if hasattr(web, "RequestKey") else "warnings")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
_MUTATING = frozenset({"create", "update", "patch", "delete", "deletecollection"})
_HTTP_REASONS = {404: "NotFound", 405: "MethodNotAllowed", 413: "RequestEntityTooLarge",
                 400: "BadRequest", 415: "UnsupportedMediaType", 406: "NotAcceptable"}


@web.middleware
async def with_request_info(request: web.Request, handler: Handler) -> web.StreamResponse:
    watch = request.query.get("watch", "") in ("true", "1") if request.query_string else False
    request[INFO] = resolve_cached(request.method, request.path, watch)
    return await handler(request)


def with_instrumentation(metrics: APIServerMetrics) -> Callable:
    """Request count and latency by verb/resource/code, and the access log (at debug, like
    v1.0's httplog at -v=3). Metric children are looked up once per label set and cached: a
    prometheus `labels()` call costs ~3 µs, a dict hit ~50 ns."""
    counters: dict[tuple, Any] = {}
    histograms: dict[tuple, Any] = {}
    access_log = debug_enabled()

    @web.middleware
    async def instrument(request: web.Request, handler: Handler) -> web.StreamResponse:
        info: RequestInfo = request[INFO]
        started = time.perf_counter()
        response = await handler(request)
        elapsed = time.perf_counter() - started
        if info.is_resource:
            verb = "WATCH" if info.verb == "watch" else request.method
            key = (verb, info.group, info.resource, info.subresource)
            histogram = histograms.get(key)
            if histogram is None:
                histogram = histograms[key] = metrics.latency.labels(*key)
            histogram.observe(elapsed)
            ckey = (key, response.status)
            counter = counters.get(ckey)
            if counter is None:
                counter = counters[ckey] = metrics.requests.labels(*key, str(response.status))
            counter.inc()
        if access_log:
            log.debug("request", verb=request.method, uri=request.path_qs,
                      status=response.status, latency_ms=round(elapsed * 1000, 3),
                      user_agent=request.headers.get("User-Agent"), remote=request.remote)
        return response

    return instrument


@web.middleware
async def with_recovery(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except errors.StatusError as exc:
        response = render.status_response(exc)
        if exc.code == 413:
            response.force_close()  # do not read (linger on) the rest of an oversized body
        return response
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        reason = _HTTP_REASONS.get(exc.status, "BadRequest" if exc.status < 500 else "InternalError")
        message = ("the server could not find the requested resource" if exc.status == 404
                   else exc.text or exc.reason)
        return render.status_response(errors.StatusError(exc.status, reason, message))
    except Exception as exc:  # the v1.0 RecoverPanics: log with traceback, answer 500, carry on
        log.error("panic serving request", method=request.method, uri=request.path_qs,
                  error=repr(exc), traceback=traceback.format_exc())
        return render.status_response(errors.internal_error(
            f"{type(exc).__name__} while serving {request.method} {request.path}"))


def with_max_in_flight(metrics: APIServerMetrics, *, readonly: int, mutating: int) -> Callable:
    """At most `readonly` reads and `mutating` writes at once (0 = no limit); beyond that,
    429 with Retry-After (v1.0 MaxInFlightLimit). Watches and logs are long-running and
    exempt, as upstream. The in-flight gauge reads the counters when scraped."""
    in_flight = {"readOnly": 0, "mutating": 0}
    limits = {"readOnly": readonly, "mutating": mutating}
    for kind in in_flight:
        metrics.inflight.labels(kind).set_function(lambda kind=kind: in_flight[kind])
    rejected = {kind: metrics.rejected.labels(kind) for kind in in_flight}

    @web.middleware
    async def limit(request: web.Request, handler: Handler) -> web.StreamResponse:
        info: RequestInfo = request[INFO]
        if info.long_running or not info.is_resource:
            return await handler(request)
        kind = "mutating" if info.verb in _MUTATING else "readOnly"
        if limits[kind] and in_flight[kind] >= limits[kind]:
            rejected[kind].inc()
            raise errors.too_many_requests(1)
        in_flight[kind] += 1
        try:
            return await handler(request)
        finally:
            in_flight[kind] -= 1

    return limit
