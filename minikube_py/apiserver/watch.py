"""The HTTP side of watch: a chunked stream of JSON lines fed by the resource's Cacher.

Kubernetes v1.0 piece: pkg/apiserver/watch.go (WatchServer.ServeHTTP: one JSON document per
event, flushed) plus the later list-then-watch rules kubectl relies on:
- resourceVersion "" or "0": synthetic ADDED events for the current state first (kubectl's
  single-object `get -w` drops the first event, assuming it is exactly that);
- resourceVersion N: only changes after N; too old -> one ERROR event (410 Expired), then close;
- `timeoutSeconds` ends the stream cleanly; without it the server picks a random timeout
  between --min-request-timeout and twice that, as upstream does, so watches rebalance;
- `allowWatchBookmarks=true`: periodic BOOKMARK events carrying only the resourceVersion.

Writes are batched: everything buffered since the last wake-up goes out in one write, which is
what makes fan-out to many watchers cheap (perf-ceilings: 4-10x over a write per event).

A client that prefers protobuf gets upstream's protobuf stream instead of JSON lines
(`application/vnd.kubernetes.protobuf;stream=watch`: length-prefixed WatchEvent frames, see
protobuf_render.py), bookmarks and the closing ERROR event included.
"""

from __future__ import annotations

import asyncio
import random
from functools import lru_cache
from typing import TYPE_CHECKING

from aiohttp import web

from ..api import errors
from ..api.fields import FieldSelector
from ..api.labels import LabelSelector
from ..api.params import int_param, parse_bool
from ..registry.cacher import Watcher, json_line
from ..registry.generic import Registry, parse_resource_version
from . import protobuf_render, render, transform
from .connection import APIRequestHandler
from .filters import WARNINGS
from .negotiation import Output, Partial, base_format
from .warning import warning_headers

if TYPE_CHECKING:
    from .serving import Serving

#: how often an idle stream checks its client is still connected (a backstop: connections of
#: the HTTP server report their loss at once, see connection.py)
_LIVENESS_CHECK = 5.0


def _encoder(registry: Registry, output: Output | Partial, include: str):
    if output is Output.TABLE:
        return render.table_event_encoder(registry.strategy.kind, include,
                                          registry.strategy.table_convertor)
    if base_format(output) is Output.YAML:
        raise errors.not_acceptable("application/yaml (watch streams are JSON)")
    if isinstance(output, Partial):  # client-go's metadata informers
        return partial_event_encoder(output)
    if output is Output.PROTOBUF:
        return protobuf_render.watch_event
    return json_line


@lru_cache(maxsize=None)
def partial_event_encoder(output: Partial):
    """A watch encoder sending each event's object as PartialObjectMetadata (upstream's
    watchEmbeddedEncoder with a target). One per output, so the fan-out shares its bytes
    between every metadata watcher of a resource. A Status (ERROR) is sent as itself; a
    conversion that does not fit (a list kind asked of events) sends the object unchanged, as
    upstream does after logging it."""
    frame = protobuf_render.watch_event if output.format is Output.PROTOBUF else json_line

    def encode(event_type: str, obj: dict) -> bytes:
        try:
            obj = transform.to_partial(obj, output.kind, output.api_version)
        except errors.StatusError:
            pass
        return frame(event_type, obj)

    encode.protobuf = output.format is Output.PROTOBUF  # type: ignore[attr-defined]
    encode.partial = True  # type: ignore[attr-defined]
    return encode


def _is_protobuf(encoder) -> bool:
    return encoder is protobuf_render.watch_event or getattr(encoder, "protobuf", False)


def _timeout(serving: Serving, request: web.Request) -> float:
    """The watch's lifetime as upstream's ListResource computes it: `timeoutSeconds` when set
    and not 0 (a negative one ends the stream at once), else a random one between
    --min-request-timeout and twice it."""
    seconds = int_param(request.query, "timeoutSeconds")
    if seconds:
        return float(max(seconds, 0))
    base = serving.options.min_request_timeout
    return base * (1 + random.random())


async def serve_watch(
    serving: Serving,
    request: web.Request,
    registry: Registry,
    namespace: str,
    labels: LabelSelector,
    fields: FieldSelector,
    output: Output,
) -> web.StreamResponse:
    query = request.query
    rv_text = query.get("resourceVersion", "")
    include = query.get("includeObject", "Metadata")
    encoder = _encoder(registry, output, include)
    timeout = _timeout(serving, request)
    bookmarks = parse_bool(query.get("allowWatchBookmarks"))
    cacher = serving.resources.cacher_of(registry)
    watcher = Watcher(namespace=namespace or None, labels=labels, fields=fields, encoder=encoder,
                      capacity=serving.options.watch_buffer_events,
                      view=registry.strategy.stored_as,
                      conversion=registry.strategy.conversion,
                      api_version=registry.strategy.api_version)
    watcher.who = request.headers.get("User-Agent", "")

    initial: list[bytes] = []
    if rv_text in ("", "0"):
        page = await registry.list(namespace or None, labels=labels, fields=fields)
        initial = [encoder("ADDED", obj) for obj in page.decoded()]
        start = page.revision
    else:
        start = parse_resource_version(rv_text)

    content_type = protobuf_render.WATCH_CONTENT_TYPE if _is_protobuf(encoder) \
        else "application/json"
    response = web.StreamResponse(status=200, headers={"Content-Type": content_type})
    for header in warning_headers(request.get(WARNINGS) or []):  # a deprecated CRD version
        response.headers.add("Warning", header)
    response.enable_chunked_encoding()
    await response.prepare(request)
    if initial:
        await response.write(b"".join(initial))
    watcher.go_live(request.transport, serving.options.watch_max_unsent_bytes)
    # a client that leaves wakes the stream at once, so it ends (and stops counting against
    # --max-watches-per-client) without waiting for its next event or liveness check
    protocol = request.protocol
    forget_lost = protocol.on_lost(watcher.wake.set) \
        if isinstance(protocol, APIRequestHandler) else None
    cacher.register(watcher, start)
    serving.metrics.watchers.labels(registry.strategy.resource).inc()
    serving.watch_clock.add(watcher)
    try:
        await _pump(serving, request, response, watcher, registry, timeout, bookmarks, start)
    except (ConnectionResetError, ConnectionError, asyncio.CancelledError):
        pass
    finally:
        if forget_lost is not None:
            forget_lost()
        serving.watch_clock.discard(watcher)
        cacher.unregister(watcher)
        serving.metrics.watchers.labels(registry.strategy.resource).dec()
    return response


async def _pump(serving: Serving, request: web.Request, response: web.StreamResponse,
                watcher: Watcher, registry: Registry, timeout: float, bookmarks: bool,
                start: int) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    bookmark_every = serving.options.bookmark_interval
    next_bookmark = loop.time() + bookmark_every
    last_revision = start
    while True:
        now = loop.time()
        if now >= deadline:
            return
        if not watcher.buffer and not watcher.closed:
            # sleep until an event, or until the watch clock wakes us for the deadline, a
            # bookmark or the liveness check (no timer per wake-up: they cost more than the
            # write when events are frequent)
            watcher.due = min(deadline, next_bookmark if bookmarks else deadline,
                              now + _LIVENESS_CHECK)
            await watcher.wake.wait()
        if watcher.buffer:  # only before the stream went live (events write themselves)
            await response.write(b"".join(watcher.take()))
        else:
            watcher.wake.clear()
        last_revision = max(last_revision, watcher.last_revision)
        if watcher.closed:
            if watcher.error is not None:
                await response.write(_event(watcher, "ERROR", watcher.error))
            return
        transport = request.transport
        if transport is None or transport.is_closing():
            return
        if bookmarks and loop.time() >= next_bookmark:
            next_bookmark = loop.time() + bookmark_every
            cacher = serving.resources.cacher_of(registry)
            # a watcher on the shared fan-out has seen everything up to the cacher's position,
            # unless events still wait for their conversion (a CRD version's webhook)
            revision = last_revision if watcher.behind else max(last_revision, cacher.position)
            await response.write(_bookmark(watcher, registry, revision))


def _event(watcher: Watcher, event_type: str, obj: dict) -> bytes:
    """An event the stream makes itself (ERROR, BOOKMARK), in the stream's own format; a
    metadata watch's bookmark is a PartialObjectMetadata too."""
    encoder = watcher.encoder
    if encoder is protobuf_render.watch_event or getattr(encoder, "partial", False):
        return encoder(event_type, obj)
    return json_line(event_type, obj)


def _bookmark(watcher: Watcher, registry: Registry, revision: int) -> bytes:
    obj = {"kind": registry.strategy.kind, "apiVersion": registry.strategy.api_version,
           "metadata": {"resourceVersion": str(revision)}}
    return _event(watcher, "BOOKMARK", obj)
